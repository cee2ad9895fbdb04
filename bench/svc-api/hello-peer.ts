// The peer: Fastify's bare "hello" route, no auth, no store, same Node and Fastify as the server under test.
import Fastify from 'fastify';

const app = Fastify({ logger: false });
app.get('/hello', async () => ({ hello: 'world' }));
const port = Number(process.argv[2] ?? 0);
await app.listen({ host: '127.0.0.1', port });
process.stdout.write('ready\n');
process.on('SIGTERM', () => void app.close().then(() => process.exit(0)));
