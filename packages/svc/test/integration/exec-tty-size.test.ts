// The terminal size of an exec is in place before the first stdin byte reaches the command: a client that sends
// `stty size` the moment the WebSocket opens reads the size it asked for, never 0 0. On this host's dockerd (API
// 1.41) that is the resize-after-start fallback, applied before the session forwards stdin; on API >= 1.42 the
// size goes with the exec create. Real server, real dockerd, namespace `s5t...`.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import WebSocket from 'ws';
import { ensureBusyboxImage, BUSYBOX_IMAGE } from '../support/busybox-image.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { cleanUp, removeDockerObjects } from './deployments-api-support.js';

const PREFIX = `s5ttty${process.pid % 100000}`;
let server: TestServer;

before(async () => {
  await ensureBusyboxImage();
  server = await startTestServer({ env: { SVC_SCHEDULER_INTERVAL: '1' }, configToml: '[server.exec]\nenabled = true\n' });
});

after(async () => {
  if (server !== undefined) await cleanUp(server, PREFIX);
  else await removeDockerObjects(PREFIX);
});

const stdin = (text: string) => JSON.stringify({ type: 'stdin', data: Buffer.from(text).toString('base64') });

/** Opens the exec socket, sends `frames` at once, collects stdout and the exit code until the server closes. */
function execSession(url: string, frames: string[]): Promise<{ stdout: string; exit: number | null | undefined }> {
  return new Promise((resolve, reject) => {
    const result: { stdout: string; exit: number | null | undefined } = { stdout: '', exit: undefined };
    const ws = new WebSocket(url, { headers: { authorization: `Bearer ${server.adminToken}` }, handshakeTimeout: 10_000 });
    const timer = setTimeout(() => {
      ws.terminate();
      reject(new Error(`exec did not finish: ${JSON.stringify(result)}`));
    }, 30_000);
    ws.on('open', () => {
      for (const frame of frames) ws.send(frame);
    });
    ws.on('message', (raw: Buffer) => {
      const frame = JSON.parse(raw.toString()) as { type: string; data?: string; code?: number | null };
      if (frame.type === 'stdout') result.stdout += Buffer.from(frame.data ?? '', 'base64').toString();
      else if (frame.type === 'exit') result.exit = frame.code;
    });
    ws.on('close', () => {
      clearTimeout(timer);
      resolve(result);
    });
    ws.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
  });
}

test('stty size sent with the first stdin frame reads the requested size, several times in a row', async () => {
  const created = await server.request<{ id: string }>('POST', '/deployments', {
    body: {
      name: 'tty',
      runtime: 'docker',
      namespace: `${PREFIX}a`,
      image: BUSYBOX_IMAGE,
      command: ['sh', '-c', 'trap "exit 0" TERM; while true; do sleep 1; done'],
      config: { image_pull_policy: 'Never' },
    },
  });
  assert.equal(created.status, 201, created.text);
  const deadline = Date.now() + 60_000;
  for (;;) {
    const got = await server.request<{ status: string; instances: unknown[] }>('GET', `/deployments/${created.body.id}`);
    if (got.body.status === 'running' && got.body.instances.length === 1) break;
    assert.ok(Date.now() < deadline, `not running: ${got.text}`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  const base = `${server.baseUrl.replace(/^http/, 'ws')}/deployments/${created.body.id}/exec?tty=true&command=sh`;
  for (const [cols, rows] of [
    [100, 40],
    [132, 43],
    [80, 24],
  ] as const) {
    const session = await execSession(`${base}&cols=${cols}&rows=${rows}`, [stdin('stty size\r'), stdin('exit 0\r')]);
    assert.match(session.stdout, new RegExp(`\\r\\n${rows} ${cols}\\r\\n`), JSON.stringify(session));
    assert.equal(session.exit, 0);
  }
});
