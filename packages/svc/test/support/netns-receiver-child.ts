// A webhook receiver for tests, run INSIDE a network namespace by netns-receiver.ts (`ip netns exec`). It is a
// real HTTP server on the namespace's veth address: to the server under test it is a remote host.
// Protocol with the parent, one JSON object per line. stdin: {seq, cmd: 'behave', path, responses} |
// {seq, cmd: 'quiet', on} | {seq, cmd: 'count'} | {seq, cmd: 'reset'}. stdout: {type: 'ready'} once listening,
// {type: 'ack', seq, count} per command, {type: 'request', ...} per request received (unless quiet).
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { createInterface } from 'node:readline';

interface Reply {
  status: number;
  delayMs?: number;
  location?: string;
}

const [host = '', portText = '0'] = process.argv.slice(2);
const behaviours = new Map<string, { responses: Reply[]; served: number }>();
let quiet = false;
let count = 0;

function write(message: object): void {
  process.stdout.write(`${JSON.stringify(message)}\n`);
}

function replyFor(path: string): Reply {
  const behaviour = behaviours.get(path);
  if (!behaviour || behaviour.responses.length === 0) return { status: 200 };
  const index = Math.min(behaviour.served, behaviour.responses.length - 1);
  behaviour.served += 1;
  return behaviour.responses[index] ?? { status: 200 };
}

function handle(request: IncomingMessage, response: ServerResponse): void {
  const chunks: Buffer[] = [];
  request.on('data', (chunk: Buffer) => chunks.push(chunk));
  request.on('end', () => {
    count += 1;
    const path = (request.url ?? '/').split('?')[0] ?? '/';
    if (!quiet) {
      write({ type: 'request', method: request.method, path, headers: request.headers, body: Buffer.concat(chunks).toString('utf8'), at: Date.now() });
    }
    const reply = replyFor(path);
    const send = () => {
      if (reply.location) response.setHeader('location', reply.location);
      response.statusCode = reply.status;
      response.end('ok');
    };
    if (reply.delayMs) setTimeout(send, reply.delayMs).unref();
    else send();
  });
}

const server = createServer(handle);
server.keepAliveTimeout = 30_000;
server.listen(Number(portText), host, () => write({ type: 'ready' }));

createInterface({ input: process.stdin }).on('line', (line) => {
  const message = JSON.parse(line) as { seq: number; cmd: string; path?: string; responses?: Reply[]; on?: boolean };
  if (message.cmd === 'behave' && message.path) behaviours.set(message.path, { responses: message.responses ?? [], served: 0 });
  if (message.cmd === 'quiet') quiet = message.on === true;
  if (message.cmd === 'reset') {
    behaviours.clear();
    count = 0;
  }
  write({ type: 'ack', seq: message.seq, count });
});
process.stdin.on('end', () => process.exit(0));
