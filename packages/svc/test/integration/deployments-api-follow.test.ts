// The follow loop of GET /deployments/{id}/logs?follow=true over a real socket and SQLite file, with a scripted
// runtime standing in for Docker where real Docker cannot be steered on a shared host: a log stream that is cut
// while its instance keeps running (what a dockerd restart does) must be re-attached after the last line sent,
// with no line repeated; an instance that appears later is attached from the stream's start.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { createTestApp, type TestApp } from '../support/app.js';
import { createTokenStore } from '../../src/store/tokens.js';
import { createUserStore } from '../../src/store/users.js';
import { generateToken, hashToken, tokenDisplayPrefix } from '../../src/crypto/token.js';
import { validateDeployment } from '../../src/domain/deployment-validation.js';
import { applyDeployment, markDeleted, purgeDeployment } from '../../src/store/deployments.js';
import type { LogLine, LogQuery, ObservedInstance, Runtime } from '../../src/runtime/runtime.js';

let testApp: TestApp;
let baseUrl: string;
let token: string;

before(async () => {
  testApp = createTestApp();
  await testApp.app.listen({ host: '127.0.0.1', port: 0 });
  const address = testApp.app.server.address();
  assert.ok(address !== null && typeof address === 'object');
  baseUrl = `http://127.0.0.1:${address.port}`;
  const user = createUserStore(testApp.deps.db).insert('root', 'scrypt$x', new Date());
  assert.ok(user);
  token = generateToken();
  createTokenStore(testApp.deps.db).insert(
    { userId: user.id, kind: 'pat', name: 'reader', tokenHash: hashToken(token), tokenPrefix: tokenDisplayPrefix(token), scopes: ['deployments:read'], namespaces: [], expireAt: null },
    new Date(),
  );
});
after(async () => {
  await testApp.close();
});

function instance(name: string): ObservedInstance {
  return { id: `id-${name}`, name, deploymentId: '', specHash: 'h', state: 'running', exitCode: null, startedAt: null, finishedAt: null, address: null, imageDigest: null };
}

/** One scripted `logs()` answer per call and instance: the lines, then either an end (a cut) or a wait for abort. */
interface Script {
  lines: string[];
  thenHold: boolean;
}

function scriptedRuntime(scripts: Map<string, Script[]>, calls: { instance: string; query: LogQuery }[]): Runtime {
  const unused = () => Promise.reject(new Error('not scripted'));
  return {
    name: 'docker',
    list: unused,
    create: unused,
    remove: unused,
    stats: unused,
    exec: unused,
    probeCommand: unused,
    ping: () => Promise.resolve(true),
    events: () => (async function* () {})(),
    logs(target: ObservedInstance, query: LogQuery, signal: AbortSignal): AsyncIterable<LogLine> {
      calls.push({ instance: target.name, query });
      const script = scripts.get(target.name)?.shift() ?? { lines: [], thenHold: true };
      return (async function* () {
        for (const line of script.lines) {
          const space = line.indexOf(' ');
          yield { instance: target.name, stream: 'stdout' as const, timestamp: line.slice(0, space), message: line.slice(space + 1) };
        }
        if (script.thenHold && !signal.aborted) await new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true }));
      })();
    },
  };
}

async function readUntil(url: string, count: number, timeoutMs = 15_000): Promise<{ messages: string[]; instances: string[] }> {
  const abort = new AbortController();
  const timer = setTimeout(() => abort.abort(), timeoutMs);
  const messages: string[] = [];
  const instances: string[] = [];
  try {
    const response = await fetch(url, { headers: { authorization: `Bearer ${token}` }, signal: abort.signal });
    assert.equal(response.status, 200);
    const reader = response.body?.getReader();
    assert.ok(reader);
    let buffer = '';
    const decoder = new TextDecoder();
    while (messages.length < count) {
      const { value, done } = await reader.read();
      if (done) break;
      buffer += decoder.decode(value, { stream: true });
      for (let split = buffer.indexOf('\n\n'); split !== -1; split = buffer.indexOf('\n\n')) {
        const event = buffer.slice(0, split);
        buffer = buffer.slice(split + 2);
        if (event.startsWith('data: ')) {
          const entry = JSON.parse(event.slice(6)) as { message: string; instance: string };
          messages.push(entry.message);
          instances.push(entry.instance);
        }
      }
    }
  } catch (error) {
    if (!abort.signal.aborted) throw error;
  } finally {
    clearTimeout(timer);
    abort.abort();
  }
  return { messages, instances };
}

function createDeployment(name: string): string {
  const validation = validateDeployment({ name, runtime: 'docker', namespace: 'd1tf', image: 'busybox', replicas: 1 });
  assert.ok(validation.ok);
  return applyDeployment(testApp.deps.db, validation.spec, false).id;
}

test('a cut stream is re-attached after the last line sent; a later instance is attached from its first line', async () => {
  const id = createDeployment('cut');
  const first = instance('d1tf_cut_aaaaaaaa');
  const second = instance('d1tf_cut_bbbbbbbb');
  const now = Date.now();
  const at = (offsetMs: number) => new Date(now + offsetMs).toISOString().replace('Z', '123Z');
  const scripts = new Map<string, Script[]>([
    [first.name, [
      { lines: [`${at(0)} one`, `${at(10)} two`], thenHold: false },
      // The re-attach asks Docker from the whole second, so it sees `two` again: it must not be sent twice.
      { lines: [`${at(10)} two`, `${at(20)} three`], thenHold: true },
    ]],
    [second.name, [{ lines: [`${at(30)} four`], thenHold: true }]],
  ]);
  const calls: { instance: string; query: LogQuery }[] = [];
  let observed: ObservedInstance[] = [first];
  testApp.deps.scheduler = { nudge: () => undefined, instancesOf: () => observed, runtime: () => scriptedRuntime(scripts, calls) };

  const reading = readUntil(`${baseUrl}/deployments/${id}/logs?follow=true&tail=5`, 4);
  await sleep(2_500);
  observed = [first, second];
  const { messages, instances } = await reading;
  assert.deepEqual(messages, ['one', 'two', 'three', 'four']);
  assert.deepEqual(instances, [first.name, first.name, first.name, second.name]);

  assert.deepEqual(calls[0], { instance: first.name, query: { tail: 5, since: null, follow: true } });
  const resumed = calls[1];
  assert.equal(resumed?.instance, first.name);
  assert.equal(resumed?.query.tail, -1);
  assert.equal(resumed?.query.since, Math.floor(Date.parse(at(10)) / 1000));
  const later = calls.find((c) => c.instance === second.name);
  assert.ok(later && later.query.tail === -1 && later.query.since !== null && later.query.since * 1000 <= now);
});

test('without a runtime the stream stays open and idle; it ends when the deployment is purged', async () => {
  const id = createDeployment('gone');
  testApp.deps.scheduler = { nudge: () => undefined, instancesOf: () => [], runtime: () => undefined };
  const abort = new AbortController();
  const response = await fetch(`${baseUrl}/deployments/${id}/logs?follow=true`, { headers: { authorization: `Bearer ${token}` }, signal: abort.signal });
  assert.equal(response.status, 200);
  const text = response.text();
  await sleep(300);
  abort.abort();
  await assert.rejects(text);

  const ended = fetch(`${baseUrl}/deployments/${id}/logs?follow=true`, { headers: { authorization: `Bearer ${token}` } }).then((r) => r.text());
  await sleep(300);
  markDeleted(testApp.deps.db, id);
  purgeDeployment(testApp.deps.db, id);
  const body = await ended;
  assert.match(body, /^: connected\n\n/);
  assert.match(body, /: deployment deleted\n\n$/);
});
