import { test } from 'node:test';
import assert from 'node:assert/strict';
import { filterDeployments, listRow, matchesLabels, parseLabelSelector, replicasCell, selectPrunable } from '../../src/cli/deployments-view.js';
import { colorAllowed, formatTime, renderTable, visibleLength } from '../../src/cli/output.js';
import { parseTokenDuration, tokenStatus } from '../../src/cli/duration.js';
import { exitCodeOf, parseServerFrame } from '../../src/cli/exec.js';
import { exitCodeForStatus, httpError } from '../../src/cli/errors.js';
import { parseAuthFile } from '../../src/cli/session.js';

const d = (status: string, extra: Record<string, unknown> = {}) => ({ id: status, status, namespace: 'ns', name: status, ...extra });

test('prune rule: default removes finished/failed states only; --all removes all', () => {
  const all = ['pending', 'creating', 'running', 'completed', 'failed', 'deleted', 'crash_loop_back_off', 'image_pull_back_off', 'create_container_error', 'network_error', 'config_error', 'file_system_error', 'error', 'insufficient_resources'].map((s) => d(s));
  const pruned = selectPrunable(all, false).map((x) => x.status);
  assert.deepEqual(pruned, ['completed', 'failed', 'deleted', 'crash_loop_back_off', 'image_pull_back_off', 'create_container_error', 'network_error', 'config_error', 'file_system_error', 'error']);
  assert.equal(selectPrunable(all, true).length, all.length);
});

test('label selectors: key=value and key, all must match', () => {
  const dep = d('running', { labels: { app: 'web', tier: 'front', empty: '' } });
  assert.deepEqual(parseLabelSelector('a=b=c'), { key: 'a', value: 'b=c' });
  assert.ok(matchesLabels(dep, [parseLabelSelector('app=web'), parseLabelSelector('tier')]));
  assert.ok(matchesLabels(dep, [parseLabelSelector('empty=')]));
  assert.ok(!matchesLabels(dep, [parseLabelSelector('app=web'), parseLabelSelector('zone')]));
  assert.ok(!matchesLabels(dep, [parseLabelSelector('app=api')]));
  const list = [dep, d('failed', { labels: { app: 'web' }, kind: 'job' })];
  assert.equal(filterDeployments(list, { statuses: [], labels: [parseLabelSelector('app=web')] }).length, 2);
  assert.equal(filterDeployments(list, { statuses: ['failed'], labels: [] }).length, 1);
  assert.equal(filterDeployments(list, { statuses: [], kind: 'worker', labels: [] }).length, 1);
});

test('list row: timestamps to the second in UTC, replicas instances/desired, plain status without colour', () => {
  const row = listRow(
    { id: 'id1', created_at: '2026-11-23T01:02:03.456789Z', updated_at: '2026-11-23T03:02:03+02:00', namespace: 'ns', name: 'web', image: 'nginx', runtime: 'docker', kind: 'worker', replicas: 3, instances: [{ id: 'a' }, { id: 'b' }], status: 'running' },
    false,
  );
  assert.deepEqual(row, ['id1', '2026-11-23 01:02:03', '2026-11-23 01:02:03', 'ns', 'web', 'nginx', 'docker', 'worker', '2/3', 'running']);
  assert.equal(replicasCell({ replicas: 2, instances: [], autoscaling: true }), '0/2*');
  assert.match(listRow(d('running'), true)[9]!, /\x1b\[32mrunning/);
});

test('tables align on visible width, ignoring colour codes', () => {
  const out = renderTable(['A', 'B'], [['\x1b[31mred\x1b[0m', 'x'], ['longer', 'y']]);
  const lines = out.trimEnd().split('\n');
  assert.equal(lines[0], 'A        B');
  assert.equal(visibleLength(lines[1]!), 'longer   x'.length);
  assert.equal(formatTime(null), '-');
  assert.equal(formatTime('garbage'), 'garbage');
});

test('colour only on a terminal without NO_COLOR', () => {
  assert.equal(colorAllowed({ write: () => true, isTTY: true }, {}), true);
  assert.equal(colorAllowed({ write: () => true, isTTY: true }, { NO_COLOR: '' }), false);
  assert.equal(colorAllowed({ write: () => true }, {}), false);
});

test('token durations and status', () => {
  assert.equal(parseTokenDuration('30d'), 30 * 86_400_000);
  assert.equal(parseTokenDuration('12h'), 12 * 3_600_000);
  assert.equal(parseTokenDuration('90m'), 90 * 60_000);
  for (const bad of ['0d', '1w', '', 'd', '1.5h', '-1h']) assert.equal(parseTokenDuration(bad), null, bad);
  const now = new Date('2026-06-01T00:00:00Z');
  assert.equal(tokenStatus({ revoked_at: null, expire_at: null }, now), 'active');
  assert.equal(tokenStatus({ revoked_at: '2026-01-01T00:00:00Z', expire_at: null }, now), 'revoked');
  assert.equal(tokenStatus({ revoked_at: null, expire_at: '2026-05-01T00:00:00Z' }, now), 'expired');
  assert.equal(tokenStatus({ revoked_at: null, expire_at: '2026-07-01T00:00:00Z' }, now), 'active');
});

test('exec frames and exit codes', () => {
  assert.deepEqual(parseServerFrame('{"type":"stdout","data":"aGk="}'), { type: 'stdout', data: 'aGk=' });
  assert.deepEqual(parseServerFrame('{"type":"exit","code":3}'), { type: 'exit', code: 3 });
  assert.deepEqual(parseServerFrame('{"type":"exit"}'), { type: 'exit' });
  assert.equal(parseServerFrame('not json'), null);
  assert.equal(parseServerFrame('{"type":"stdout"}'), null);
  assert.equal(exitCodeOf(3), 3);
  assert.equal(exitCodeOf(undefined), 1);
  assert.equal(exitCodeOf(-1), 1);
  assert.equal(exitCodeOf(300), 1);
});

test('HTTP status → exit code and the spec\'s error lines', () => {
  assert.deepEqual([200, 204, 400, 401, 403, 404, 408, 409, 422, 500].map(exitCodeForStatus), [0, 0, 1, 2, 2, 4, 1, 5, 1, 1]);
  const target = { kind: 'secret', name: 'db' };
  assert.equal(httpError(target, 404, undefined).message, "secret 'db' not found");
  assert.equal(httpError(target, 403, undefined).message, "not authorized to act on secret 'db'");
  assert.equal(httpError({ kind: 'secrets', name: '*', list: true, namespace: 'prod' }, 403, undefined).message, "cannot list secrets in namespace 'prod': not authorized");
  assert.equal(httpError(target, 500, { detail: 'boom' }).message, "secret 'db': request failed (500): boom");
  const conflict = httpError(target, 409, { error: 'referenced', deployments: ['prod/web'], hint: 'use --force' });
  assert.equal(conflict.message, "secret 'db' already exists or still has dependents");
  assert.deepEqual(conflict.details, ['referenced by:', '  prod/web', 'hint: use --force']);
  const invalid = httpError({ kind: 'user', name: 'x' }, 422, {
    title: 'Validation failed',
    detail: 'username: too short\npassword: too short',
    violations: [
      { property_path: 'username', message: 'too short', code: 'user.username.length' },
      { property_path: 'password', message: 'too short', code: 'user.password.length' },
    ],
  });
  assert.equal(invalid.message, "user 'x': request failed (422)");
  assert.deepEqual(invalid.details, ['  username: too short (user.username.length)', '  password: too short (user.password.length)']);
  assert.equal(invalid.exitCode, 1);
});

test('auth.json parsing ignores anything malformed', () => {
  assert.deepEqual(parseAuthFile('{"contexts":{"a":{"token":"t"},"b":{"token":5},"c":null}}'), { contexts: { a: { token: 't' } } });
  assert.deepEqual(parseAuthFile('not json'), { contexts: {} });
});
