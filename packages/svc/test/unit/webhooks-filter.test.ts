import { test } from 'node:test';
import assert from 'node:assert/strict';
import { eventFilterProblem, filterMatches, filtersMatch } from '../../src/domain/webhook-filter.js';
import { WEBHOOK_EVENT_KINDS as EVENT_KINDS } from '../../src/domain/events.js';
import { validateWebhookInput } from '../../src/domain/webhook.js';

test('valid filters: every exact kind, the family wildcard and *', () => {
  for (const filter of [...EVENT_KINDS, 'deployment.*', '*']) assert.equal(eventFilterProblem(filter), null, filter);
});

test('malformed filters: missing dot, unknown family, unknown exact kind, wrong case, empty', () => {
  const cases: Array<[string, RegExp]> = [
    ['deployment', /not an event kind/],
    ['', /not an event kind/],
    ['**', /not an event kind/],
    ['node.*', /unknown event family/],
    ['*.status_changed', /unknown event family/],
    ['.status_changed', /unknown event family/],
    ['Deployment.scaled', /unknown event family/],
    ['deployment.', /not a known event kind/],
    ['deployment.created', /not a known event kind/],
    ['deployment.STATUS_CHANGED', /not a known event kind/],
    ['deployment.**', /not a known event kind/],
    ['deployment.scaled ', /not a known event kind/],
    ['deployment.*.x', /not a known event kind/],
  ];
  for (const [filter, reason] of cases) assert.match(eventFilterProblem(filter) ?? '', reason, JSON.stringify(filter));
});

test('matching: exact, family wildcard, star, empty list = all', () => {
  assert.ok(filterMatches('deployment.scaled', 'deployment.scaled'));
  assert.ok(!filterMatches('deployment.scaled', 'deployment.error'));
  for (const kind of EVENT_KINDS) {
    assert.ok(filterMatches('deployment.*', kind));
    assert.ok(filterMatches('*', kind));
    assert.ok(filtersMatch([], kind));
  }
  assert.ok(filtersMatch(['deployment.error', 'deployment.scaled'], 'deployment.scaled'));
  assert.ok(!filtersMatch(['deployment.error', 'deployment.scaled'], 'deployment.status_changed'));
  // A stored malformed filter (never accepted by the API) matches nothing rather than everything.
  assert.ok(!filtersMatch(['deployment'], 'deployment.scaled'));
  assert.ok(!filtersMatch(['node.*'], 'deployment.scaled'));
});

test('webhook validation reports every violation at once with the spec codes', () => {
  const violations = validateWebhookInput({ url: 'http://127.0.0.1/', events: ['deployment.scaled', 'nope', 'deployment.bogus'] });
  assert.deepEqual(
    violations.map((v) => [v.property_path, v.code]),
    [
      ['url', 'webhook.url.format'],
      ['events[1]', 'webhook.events.unknown'],
      ['events[2]', 'webhook.events.unknown'],
    ],
  );
  assert.deepEqual(validateWebhookInput({ url: 'https://hooks.example.com/x', events: [] }), []);
});
