// Pure parts of GET /deployments/{id}/logs: the level heuristic, `since`, the query, timestamp order and merging.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ApiProblem } from '../../src/api/problem.js';
import {
  compareTimestamps,
  DEFAULT_LOG_TAIL,
  logLevelOf,
  MAX_LOG_TAIL,
  mergeLogs,
  parseLogRequest,
  parseSince,
  selectInstances,
  timestampMs,
  toLogEntry,
  type LogEntry,
} from '../../src/api/deployment-logs.js';
import type { ObservedInstance } from '../../src/runtime/runtime.js';

const NOW = new Date('2026-11-23T12:00:00.000Z');

function badRequest(fn: () => unknown, pattern: RegExp): void {
  assert.throws(fn, (error: unknown) => error instanceof ApiProblem && error.status === 400 && pattern.test(error.detail));
}

test('level heuristic: each spec marker, case-insensitive; most severe wins; default info', () => {
  assert.equal(logLevelOf('2024/01/01 [error] 12#12: open() failed'), 'error');
  assert.equal(logLevelOf('[ERROR] disk full'), 'error');
  assert.equal(logLevelOf('[warning] low memory'), 'warning');
  assert.equal(logLevelOf('[notice] 1#1: start worker processes'), 'notice');
  assert.equal(logLevelOf('[info] listening'), 'info');
  assert.equal(logLevelOf('INFO: Started server process'), 'info');
  assert.equal(logLevelOf('nginx [warn] conflicting server name'), 'warning');
  assert.equal(logLevelOf('[crit] SSL_do_handshake() failed'), 'error');
  assert.equal(logLevelOf('[info] retrying after [error] timeout'), 'error');
  assert.equal(logLevelOf('[notice] old config [warning] ignored'), 'warning');
  assert.equal(logLevelOf('plain line'), 'info');
  assert.equal(logLevelOf('error without brackets'), 'info');
  assert.equal(logLevelOf(''), 'info');
});

test('since: relative ages count back from now; RFC 3339 with a zone; everything else null', () => {
  assert.equal(parseSince('30s', NOW), NOW.getTime() - 30_000);
  assert.equal(parseSince('10m', NOW), NOW.getTime() - 600_000);
  assert.equal(parseSince('2h', NOW), NOW.getTime() - 7_200_000);
  assert.equal(parseSince('1h30m', NOW), NOW.getTime() - 5_400_000);
  assert.equal(parseSince('0s', NOW), NOW.getTime());
  assert.equal(parseSince('2026-11-23T11:00:00Z', NOW), Date.parse('2026-11-23T11:00:00Z'));
  assert.equal(parseSince('2026-11-23T13:00:00.5+02:00', NOW), Date.parse('2026-11-23T11:00:00.5Z'));
  assert.equal(parseSince('2026-11-23t11:00:00z', NOW), Date.parse('2026-11-23T11:00:00Z'));
  for (const bad of ['', '30', '1d', '-5s', '5 s', 's', '2026-11-23', '2026-11-23T11:00:00', 'yesterday', '1e3s', '2026-13-45T99:00:00Z']) {
    assert.equal(parseSince(bad, NOW), null, bad);
  }
});

test('log query: defaults, bounds, and 400 for anything malformed', () => {
  assert.deepEqual(parseLogRequest({}, NOW), { tail: DEFAULT_LOG_TAIL, sinceMs: null, container: null, follow: false });
  assert.deepEqual(parseLogRequest({ tail: '5', since: '1m', container: 'ns_web_0123abcd', follow: 'true' }, NOW), {
    tail: 5,
    sinceMs: NOW.getTime() - 60_000,
    container: 'ns_web_0123abcd',
    follow: true,
  });
  assert.equal(parseLogRequest({ tail: '0' }, NOW).tail, 0);
  assert.equal(parseLogRequest({ tail: String(MAX_LOG_TAIL) }, NOW).tail, MAX_LOG_TAIL);
  assert.equal(parseLogRequest({ follow: 'false' }, NOW).follow, false);
  badRequest(() => parseLogRequest({ tail: String(MAX_LOG_TAIL + 1) }, NOW), /tail/);
  badRequest(() => parseLogRequest({ tail: '-1' }, NOW), /tail/);
  badRequest(() => parseLogRequest({ tail: 'all' }, NOW), /tail/);
  badRequest(() => parseLogRequest({ tail: '1.5' }, NOW), /tail/);
  badRequest(() => parseLogRequest({ tail: ['1', '2'] }, NOW), /tail/);
  badRequest(() => parseLogRequest({ since: 'yesterday' }, NOW), /since/);
  badRequest(() => parseLogRequest({ follow: 'yes' }, NOW), /follow/);
  badRequest(() => parseLogRequest({ container: '' }, NOW), /container/);
  badRequest(() => parseLogRequest({ container: 'x'.repeat(300) }, NOW), /container/);
});

test('timestamps: Docker drops trailing zeros, so order is by time, not by text', () => {
  assert.ok(compareTimestamps('2026-11-23T12:00:00.1Z', '2026-11-23T12:00:00.09Z') > 0);
  assert.ok(compareTimestamps('2026-11-23T12:00:00.000000001Z', '2026-11-23T12:00:00Z') > 0);
  assert.equal(compareTimestamps('2026-11-23T12:00:00.5Z', '2026-11-23T12:00:00.500000000Z'), 0);
  assert.ok(compareTimestamps('2026-11-23T12:00:01Z', '2026-11-23T12:00:00.999999999Z') > 0);
  assert.ok(compareTimestamps('2026-11-23T13:00:00+02:00', '2026-11-23T12:00:00Z') < 0);
  assert.equal(timestampMs('2026-11-23T12:00:00.123456789Z'), Date.parse('2026-11-23T12:00:00.123Z'));
});

function entry(instance: string, timestamp: string, message = `${instance}@${timestamp}`): LogEntry {
  return { instance, timestamp, message, level: 'info' };
}

test('merge: time order across instances, the last `tail` entries, none before `since`', () => {
  const a = [entry('a', '2026-11-23T12:00:00.1Z'), entry('a', '2026-11-23T12:00:02Z')];
  const b = [entry('b', '2026-11-23T12:00:00.05Z'), entry('b', '2026-11-23T12:00:01Z'), entry('b', '2026-11-23T12:00:03Z')];
  assert.deepEqual(
    mergeLogs([a, b], 100, null).map((e) => e.message),
    ['b@2026-11-23T12:00:00.05Z', 'a@2026-11-23T12:00:00.1Z', 'b@2026-11-23T12:00:01Z', 'a@2026-11-23T12:00:02Z', 'b@2026-11-23T12:00:03Z'],
  );
  assert.deepEqual(mergeLogs([a, b], 2, null).map((e) => e.instance), ['a', 'b']);
  assert.deepEqual(mergeLogs([a, b], 0, null), []);
  assert.deepEqual(
    mergeLogs([a, b], 100, Date.parse('2026-11-23T12:00:01Z')).map((e) => e.timestamp),
    ['2026-11-23T12:00:01Z', '2026-11-23T12:00:02Z', '2026-11-23T12:00:03Z'],
  );
  assert.deepEqual(mergeLogs([], 10, null), []);
});

test('a log line becomes a Log entry with its inferred level', () => {
  assert.deepEqual(toLogEntry({ instance: 'ns_web_0123abcd', stream: 'stderr', timestamp: '2026-11-23T12:00:00Z', message: '[warning] slow' }), {
    instance: 'ns_web_0123abcd',
    message: '[warning] slow',
    level: 'warning',
    timestamp: '2026-11-23T12:00:00Z',
  });
});

function observed(name: string, id: string, state: ObservedInstance['state']): ObservedInstance {
  return { id, name, deploymentId: 'd', specHash: 'h', state, exitCode: null, startedAt: null, finishedAt: null, address: null, imageDigest: null };
}

test('instance selection: all readable ones by name, or the one named by container (name or id)', () => {
  const list = [observed('ns_web_bbbbbbbb', 'id-b', 'running'), observed('ns_web_aaaaaaaa', 'id-a', 'exited'), observed('ns_web_cccccccc', 'id-c', 'removing')];
  assert.deepEqual(selectInstances(list, null).map((i) => i.name), ['ns_web_aaaaaaaa', 'ns_web_bbbbbbbb']);
  assert.deepEqual(selectInstances(list, 'ns_web_bbbbbbbb').map((i) => i.id), ['id-b']);
  assert.deepEqual(selectInstances(list, 'id-a').map((i) => i.id), ['id-a']);
  assert.deepEqual(selectInstances(list, 'ns_web_cccccccc'), []);
  assert.deepEqual(selectInstances(list, 'nope'), []);
});
