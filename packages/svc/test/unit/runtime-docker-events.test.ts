import { test } from 'node:test';
import assert from 'node:assert/strict';
import { EventCursor, eventKey, toRuntimeEvent } from '../../src/runtime/docker/events.js';

function message(action: string, attributes: Record<string, string>, timeNano = 1_700_000_000_000_000_000n, id = 'c1') {
  return { Type: 'container', Action: action, id, Actor: { ID: id, Attributes: attributes }, time: Number(timeNano / 1_000_000_000n), timeNano: timeNano.toString() };
}

test('start, die (with exit code), destroy and oom of svc containers become runtime events', () => {
  assert.deepEqual(toRuntimeEvent(message('start', { svc_deployment: 'd-1' })), { deploymentId: 'd-1', instanceId: 'c1', action: 'start', exitCode: null });
  assert.deepEqual(toRuntimeEvent(message('die', { svc_deployment: 'd-1', exitCode: '137' })), { deploymentId: 'd-1', instanceId: 'c1', action: 'die', exitCode: 137 });
  assert.deepEqual(toRuntimeEvent(message('destroy', { svc_deployment: 'd-1' })), { deploymentId: 'd-1', instanceId: 'c1', action: 'destroy', exitCode: null });
  assert.deepEqual(toRuntimeEvent(message('oom', { svc_deployment: 'd-1' })), { deploymentId: 'd-1', instanceId: 'c1', action: 'oom', exitCode: null });
  assert.equal(toRuntimeEvent(message('pause', { svc_deployment: 'd-1' }))?.action, 'other');
  assert.equal(toRuntimeEvent(message('die', { svc_deployment: 'd-1', exitCode: 'x' }))?.exitCode, null);
});

test('events of foreign containers, other types and garbage are ignored', () => {
  assert.equal(toRuntimeEvent(message('start', {})), null);
  assert.equal(toRuntimeEvent({ ...message('create', { svc_deployment: 'd-1' }), Type: 'network' }), null);
  assert.equal(toRuntimeEvent(null), null);
  assert.equal(toRuntimeEvent('start'), null);
});

test('the cursor drops replays and events from before the start, and reconnects from the newest second', () => {
  const start = 1_700_000_000_500_000_000n;
  const cursor = new EventCursor(start);
  assert.equal(cursor.sinceSeconds(), 1_700_000_000);
  const early = eventKey(message('start', {}, start - 1n));
  const first = eventKey(message('start', {}, start + 10n));
  const sameTimeOther = eventKey(message('die', {}, start + 10n));
  const later = eventKey(message('destroy', {}, 1_700_000_002_000_000_000n));
  assert.ok(early && first && sameTimeOther && later);
  assert.equal(cursor.accept(early), false);
  assert.equal(cursor.accept(first), true);
  assert.equal(cursor.accept(sameTimeOther), true);
  assert.equal(cursor.accept(first), false, 'replayed after reconnect');
  assert.equal(cursor.accept(later), true);
  assert.equal(cursor.accept(first), false, 'older than the newest seen');
  assert.equal(cursor.sinceSeconds(), 1_700_000_002);
  assert.equal(eventKey({ Action: 'start' }), null);
  // dockerd writes timeNano as a JSON number, which JSON.parse rounds; both forms are read.
  assert.deepEqual(eventKey({ Action: 'start', Actor: { ID: 'x' }, timeNano: '1700000000000000001' }), { timeNano: 1_700_000_000_000_000_001n, key: 'start:x' });
  assert.deepEqual(eventKey({ Action: 'die', Actor: { ID: 'y' }, timeNano: 1_700_000_000_000_000_000 }), { timeNano: 1_700_000_000_000_000_000n, key: 'die:y' });
});
