// Opens N keep-alive connections to 127.0.0.1:PORT, sends one request on each, then holds them idle for
// HOLD_MS so the caller can read the proxy's memory. Usage: node idle-conns.mjs PORT N HOLD_MS
import net from 'node:net';

const [port, count, holdMs] = process.argv.slice(2).map(Number);
const sockets = [];
let answered = 0;
await new Promise((resolve) => {
  for (let i = 0; i < count; i++) {
    const s = net.connect(port, '127.0.0.1', () => s.write('GET / HTTP/1.1\r\nHost: bench.test\r\n\r\n'));
    s.once('data', () => {
      if (++answered === count) resolve();
    });
    s.on('error', () => {
      if (++answered === count) resolve();
    });
    sockets.push(s);
  }
  setTimeout(resolve, 10_000);
});
process.stdout.write(`ready ${answered}\n`);
await new Promise((r) => setTimeout(r, holdMs));
for (const s of sockets) s.destroy();
