// The docker runtime's streaming side against the real dockerd: logs, stats, exec, command probes, events.

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { createConnection, createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { createDockerRuntime } from '../../src/runtime/docker/index.js';
import type { LogLine, ObservedInstance, RuntimeEvent } from '../../src/runtime/runtime.js';
import { BUSYBOX_IMAGE, ensureBusyboxImage } from '../support/busybox-image.js';
import { cleanupNamespace, docker, eventually, instanceSpec, testNamespace } from './docker-runtime-helpers.js';

const runtime = createDockerRuntime({});
const ns = testNamespace();
const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;

async function collect(iterable: AsyncIterable<LogLine>, limit = Number.POSITIVE_INFINITY): Promise<LogLine[]> {
  const lines: LogLine[] = [];
  for await (const line of iterable) {
    lines.push(line);
    if (lines.length >= limit) break;
  }
  return lines;
}

/** Reads events into an array in the background until `signal` aborts. */
function recordEvents(source: AsyncIterable<RuntimeEvent>): { events: RuntimeEvent[]; done: Promise<void> } {
  const events: RuntimeEvent[] = [];
  const done = (async () => {
    for await (const event of source) events.push(event);
  })();
  return { events, done };
}

describe('docker runtime streams', { timeout: 240_000 }, () => {
  before(async () => {
    await ensureBusyboxImage();
  });
  after(async () => {
    await cleanupNamespace(ns);
  });

  test('logs: all, tail, since, stdout/stderr split and RFC 3339 timestamps', async () => {
    const instance = await runtime.create(
      instanceSpec(ns, 'logs', { command: ['sh', '-c', 'for i in 1 2 3 4 5; do echo line$i; done; echo problem >&2; sleep 300'] }),
    );
    const all = await eventually(async () => {
      const lines = await collect(runtime.logs(instance, { tail: 100, since: null, follow: false }, new AbortController().signal));
      return lines.length >= 6 ? lines : undefined;
    }, 10_000, 'six log lines');
    assert.deepEqual(all.filter((l) => l.stream === 'stdout').map((l) => l.message), ['line1', 'line2', 'line3', 'line4', 'line5']);
    assert.deepEqual(all.filter((l) => l.stream === 'stderr').map((l) => l.message), ['problem']);
    for (const line of all) {
      assert.equal(line.instance, instance.name);
      assert.match(line.timestamp, RFC3339);
    }

    const tail = await collect(runtime.logs(instance, { tail: 2, since: null, follow: false }, new AbortController().signal));
    assert.equal(tail.length, 2);
    assert.deepEqual(new Set(tail.map((l) => l.message)), new Set(all.slice(-2).map((l) => l.message)));

    const future = Math.floor(Date.now() / 1000) + 3600;
    assert.deepEqual(await collect(runtime.logs(instance, { tail: 100, since: future, follow: false }, new AbortController().signal)), []);

    const aborted = new AbortController();
    aborted.abort();
    assert.deepEqual(await collect(runtime.logs(instance, { tail: 100, since: null, follow: false }, aborted.signal)), []);
    await runtime.remove(instance.id, 0);
  });

  test('logs: follow delivers new lines and ends promptly when the signal aborts', async () => {
    const instance = await runtime.create(instanceSpec(ns, 'follow', { command: ['sh', '-c', 'i=0; while true; do i=$((i+1)); echo tick$i; sleep 0.2; done'] }));
    const controller = new AbortController();
    const received: LogLine[] = [];
    const started = Date.now();
    const reading = (async () => {
      for await (const line of runtime.logs(instance, { tail: 0, since: null, follow: true }, controller.signal)) {
        received.push(line);
        if (received.length === 4) controller.abort();
      }
    })();
    await Promise.race([reading, sleep(15_000).then(() => assert.fail('follow did not end after abort'))]);
    assert.ok(received.length >= 4);
    assert.ok(received.every((l) => /^tick\d+$/.test(l.message)));
    const numbers = received.map((l) => Number(l.message.slice(4)));
    assert.deepEqual(numbers, [...numbers].sort((a, b) => a - b), 'lines in order');
    assert.ok(Date.now() - started < 10_000);

    // Aborting while no line is arriving must end the stream too.
    const idle = new AbortController();
    const quiet = await runtime.create(instanceSpec(ns, 'quiet'));
    const idleRead = collect(runtime.logs(quiet, { tail: 10, since: null, follow: true }, idle.signal));
    setTimeout(() => idle.abort(), 300);
    assert.deepEqual(await Promise.race([idleRead, sleep(10_000).then(() => 'hung' as const)]), []);
    await runtime.remove(instance.id, 0);
    await runtime.remove(quiet.id, 0);
  });

  test('logs of a TTY container are read raw, as stdout', async () => {
    const container = await docker.createContainer({
      Image: BUSYBOX_IMAGE,
      name: `${ns}_tty_0badc0de`,
      Tty: true,
      Cmd: ['sh', '-c', 'echo tty-line; echo tty-err >&2; sleep 300'],
      Labels: { svc_deployment: 'tty-test', 'svc.namespace': ns },
      HostConfig: { NetworkMode: 'none' },
    });
    await container.start();
    const instance: ObservedInstance = {
      id: container.id,
      name: `${ns}_tty_0badc0de`,
      deploymentId: 'tty-test',
      specHash: '',
      state: 'running',
      exitCode: null,
      startedAt: null,
      finishedAt: null,
      address: null,
      imageDigest: null,
    };
    const lines = await eventually(async () => {
      const found = await collect(runtime.logs(instance, { tail: 100, since: null, follow: false }, new AbortController().signal));
      return found.length >= 2 ? found : undefined;
    }, 10_000, 'tty log lines');
    assert.deepEqual(lines.map((l) => [l.stream, l.message]), [['stdout', 'tty-line'], ['stdout', 'tty-err']]);
    await runtime.remove(container.id, 0);
  });

  test('stats: memory, limit, pids and network counters are populated', async () => {
    const instance = await runtime.create(
      instanceSpec(ns, 'stats', { command: ['sh', '-c', 'sleep 300 & sleep 300 & wait'], resources: { nanoCpus: null, memoryBytes: 128 * 1024 * 1024, memoryReservationBytes: null } }),
    );
    const stats = await eventually(async () => {
      const s = await runtime.stats(instance);
      return s.pids.current >= 3 ? s : undefined;
    }, 15_000, 'three processes in stats');
    assert.ok(stats.memory.usageBytes > 0, 'memory usage');
    assert.equal(stats.memory.limitBytes, 128 * 1024 * 1024);
    assert.ok(stats.cpuUsagePercent >= 0 && Number.isFinite(stats.cpuUsagePercent));
    for (const value of [stats.network.rxBytes, stats.network.txBytes, stats.network.rxPackets, stats.network.txPackets, stats.diskIo.readBytes, stats.diskIo.writeBytes, stats.pids.limit]) {
      assert.ok(Number.isInteger(value) && value >= 0);
    }
    await runtime.remove(instance.id, 0);
    await assert.rejects(runtime.stats(instance), (error: unknown) => error instanceof Error && error.name === 'RuntimeError');
  });

  test('exec: stdin reaches the command, stdout and stderr are separate, exit code 3 is reported', async () => {
    const instance = await runtime.create(instanceSpec(ns, 'exec'));
    const session = await runtime.exec(instance, { command: ['sh', '-c', 'read line; echo "got:$line"; echo oops >&2; exit 3'], tty: false });
    session.stdin.write('ping\n');
    const out = { stdout: '', stderr: '' };
    for await (const chunk of session.output) out[chunk.stream] += chunk.data.toString();
    assert.equal(out.stdout, 'got:ping\n');
    assert.equal(out.stderr, 'oops\n');
    assert.equal(await session.exitCode(), 3);
    session.close();

    // Closing stdin is seen by the command as end of input.
    const cat = await runtime.exec(instance, { command: ['cat'], tty: false });
    cat.stdin.end('echo-me\n');
    let echoed = '';
    for await (const chunk of cat.output) echoed += chunk.data.toString();
    assert.equal(echoed, 'echo-me\n');
    assert.equal(await cat.exitCode(), 0);
    await runtime.remove(instance.id, 0);
  });

  test('exec: the exit code is known without draining output; a closed session of a running command gives null', async () => {
    const instance = await runtime.create(instanceSpec(ns, 'undrained'));
    const quick = await runtime.exec(instance, { command: ['sh', '-c', 'echo ignored; exit 4'], tty: false });
    assert.equal(await Promise.race([quick.exitCode(), sleep(10_000).then(() => 'hung' as const)]), 4);
    quick.close();
    const endless = await runtime.exec(instance, { command: ['sleep', '300'], tty: false });
    endless.close();
    assert.equal(await Promise.race([endless.exitCode(), sleep(10_000).then(() => 'hung' as const)]), null);
    await runtime.remove(instance.id, 0);
  });

  test('exec with a TTY honours the initial size and resize', async () => {
    const instance = await runtime.create(instanceSpec(ns, 'tty'));
    const session = await runtime.exec(instance, { command: ['sh', '-c', 'sleep 0.3; stty size; read x; stty size'], tty: true, cols: 100, rows: 40 });
    let text = '';
    const reading = (async () => {
      for await (const chunk of session.output) {
        assert.equal(chunk.stream, 'stdout');
        text += chunk.data.toString();
      }
    })();
    await eventually(async () => (text.includes('40 100') ? true : undefined), 10_000, 'initial tty size');
    await session.resize(120, 50);
    session.stdin.write('\n');
    await reading;
    assert.match(text, /50 120/);
    assert.equal(await session.exitCode(), 0);
    await runtime.remove(instance.id, 0);
  });

  test('exec in a container that is not running is a RuntimeError', async () => {
    const instance = await runtime.create(instanceSpec(ns, 'stopped', { kind: 'job', command: ['true'] }));
    await eventually(async () => ((await runtime.list()).find((i) => i.id === instance.id)?.state === 'exited' ? true : undefined));
    await assert.rejects(runtime.exec(instance, { command: ['true'], tty: false }), (error: unknown) => error instanceof Error && error.name === 'RuntimeError');
    assert.equal(await runtime.probeCommand(instance, ['true'], 2000), false);
    await runtime.remove(instance.id, 0);
  });

  test('probeCommand is true once the exec starts, whatever its exit code', async () => {
    const instance = await runtime.create(instanceSpec(ns, 'probe'));
    assert.equal(await runtime.probeCommand(instance, ['true'], 5000), true);
    assert.equal(await runtime.probeCommand(instance, ['sh', '-c', 'exit 1'], 5000), true);
    const gone: ObservedInstance = { ...instance, id: 'f'.repeat(64) };
    assert.equal(await runtime.probeCommand(gone, ['true'], 5000), false);
    await runtime.remove(instance.id, 0);
  });

  test('events: start, die with exit code, destroy when removed behind our back; ends on abort', async () => {
    const controller = new AbortController();
    const { events, done } = recordEvents(runtime.events(controller.signal));
    await sleep(300);
    const job = await runtime.create(instanceSpec(ns, 'dies', { kind: 'job', command: ['sh', '-c', 'sleep 0.5; exit 5'] }));
    const die = await eventually(async () => events.find((e) => e.instanceId === job.id && e.action === 'die'), 15_000, 'die event');
    assert.equal(die.exitCode, 5);
    assert.equal(die.deploymentId, job.deploymentId);
    assert.ok(events.some((e) => e.instanceId === job.id && e.action === 'start' && e.exitCode === null));

    await docker.getContainer(job.id).remove({ force: true });
    await eventually(async () => events.find((e) => e.instanceId === job.id && e.action === 'destroy'), 15_000, 'destroy event');

    // Containers without the svc_deployment label are not reported.
    const foreign = await docker.createContainer({ Image: BUSYBOX_IMAGE, Cmd: ['true'], Labels: { 'svc.namespace': ns }, HostConfig: { NetworkMode: 'none' } });
    await foreign.start();
    await sleep(500);
    await foreign.remove({ force: true });
    assert.equal(events.some((e) => e.instanceId === foreign.id), false);

    controller.abort();
    await Promise.race([done, sleep(5000).then(() => assert.fail('events did not end after abort'))]);
  });

  test('events: a memory limit overrun reports oom, then die with 137', async () => {
    const controller = new AbortController();
    const { events, done } = recordEvents(runtime.events(controller.signal));
    await sleep(300);
    const hog = await runtime.create(
      instanceSpec(ns, 'hog', {
        kind: 'job',
        command: ['sh', '-c', 'x=$(head -c 64000000 /dev/zero | tr "\\0" a); echo survived'],
        resources: { nanoCpus: null, memoryBytes: 8 * 1024 * 1024, memoryReservationBytes: null },
      }),
    );
    await eventually(async () => events.find((e) => e.instanceId === hog.id && e.action === 'oom'), 15_000, 'oom event');
    const die = await eventually(async () => events.find((e) => e.instanceId === hog.id && e.action === 'die'), 15_000, 'die event');
    assert.equal(die.exitCode, 137);
    const listed = await eventually(async () => (await runtime.list()).find((i) => i.id === hog.id && i.state === 'exited'));
    assert.equal(listed.exitCode, 137);
    controller.abort();
    await done;
    await runtime.remove(hog.id, 0);
  });

  test('events reconnect after the daemon connection drops and replay what happened meanwhile', async () => {
    // A unix-socket relay in front of dockerd stands in for a daemon restart: cutting every relayed connection
    // ends the event stream exactly as a restarting dockerd does.
    const dir = await mkdtemp(join(tmpdir(), 's3t-relay-'));
    const relayPath = join(dir, 'docker.sock');
    const sockets = new Set<Socket>();
    let accepting = true;
    const relay: Server = createServer((client) => {
      if (!accepting) return client.destroy();
      const upstream = createConnection('/var/run/docker.sock');
      sockets.add(client).add(upstream);
      client.pipe(upstream).pipe(client);
      const drop = (): void => {
        client.destroy();
        upstream.destroy();
        sockets.delete(client);
        sockets.delete(upstream);
      };
      client.on('error', drop).on('close', drop);
      upstream.on('error', drop).on('close', drop);
    });
    await new Promise<void>((resolve) => relay.listen(relayPath, resolve));
    const relayed = createDockerRuntime({ socketPath: relayPath, eventsInitialBackoffMs: 200, eventsMaxBackoffMs: 400 });
    const controller = new AbortController();
    const { events, done } = recordEvents(relayed.events(controller.signal));
    try {
      await sleep(300);
      const first = await runtime.create(instanceSpec(ns, 'before-drop'));
      await eventually(async () => events.find((e) => e.instanceId === first.id && e.action === 'start'), 10_000, 'start before the drop');

      accepting = false;
      for (const socket of sockets) socket.destroy();
      const second = await runtime.create(instanceSpec(ns, 'during-drop'));
      await sleep(600);
      accepting = true;

      await eventually(async () => events.find((e) => e.instanceId === second.id && e.action === 'start'), 15_000, 'start replayed after reconnect');
      assert.equal(events.filter((e) => e.instanceId === first.id && e.action === 'start').length, 1, 'no duplicate after replay');
      await runtime.remove(first.id, 0);
      await runtime.remove(second.id, 0);
    } finally {
      controller.abort();
      await Promise.race([done, sleep(5000)]);
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => relay.close(() => resolve()));
      await rm(dir, { recursive: true, force: true });
    }
  });
});
