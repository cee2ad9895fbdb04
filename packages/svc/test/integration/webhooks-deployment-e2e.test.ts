// Webhooks from a real deployment: a webhook created through the API points at a receiver on a network namespace
// of this test; a deployment created through the API reaches `running` on the real dockerd; the receiver gets the
// scheduler's own `deployment.status_changed` (pending → creating → running) and `deployment.scaled` events, each
// signed as documented and carrying the deployment's envelope. Also: an enqueue wakes the delivery worker, so a
// delivery does not wait for the next poll. Namespaces `s5t...`; containers and networks removed in after().
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHmac, randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createSecretBox } from '../../src/crypto/secret-box.js';
import { webhookEvent } from '../../src/domain/events.js';
import { migrate, openDatabase } from '../../src/store/db.js';
import { enqueueEvent } from '../../src/store/outbox.js';
import { createWebhook as insertWebhookRow } from '../../src/store/webhooks.js';
import { startWebhookDelivery } from '../../src/webhooks/index.js';
import { DEFAULT_DELIVERY_SETTINGS } from '../../src/webhooks/settings.js';
import { verifyDelivery } from '../../src/webhooks/signer.js';
import { ensureBusyboxImage, BUSYBOX_IMAGE } from '../support/busybox-image.js';
import { startNetnsReceiver, type NetnsReceiver, type ReceivedRequest } from '../support/netns-receiver.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { cleanUp, removeDockerObjects } from './deployments-api-support.js';
import { FAST_DELIVERY_ENV, createWebhook } from './delivery-support.js';

const PREFIX = `s5thook${process.pid % 100000}`;
const SECRET = 's5t-webhook-secret-1';
let server: TestServer | undefined;
let receiver: NetnsReceiver | undefined;

before(async () => {
  await ensureBusyboxImage();
  receiver = await startNetnsReceiver();
  server = await startTestServer({ env: { ...FAST_DELIVERY_ENV, SVC_SCHEDULER_INTERVAL: '1' } });
});

after(async () => {
  try {
    if (server !== undefined) await cleanUp(server, PREFIX);
    else await removeDockerObjects(PREFIX);
  } finally {
    await receiver?.close();
  }
});

const header = (request: ReceivedRequest, name: string): string | undefined => {
  const value = request.headers[name];
  return Array.isArray(value) ? value[0] : value;
};

function assertSigned(request: ReceivedRequest): void {
  const expected = createHmac('sha256', SECRET).update(request.body).digest('hex');
  assert.equal(header(request, 'x-svc-signature'), `sha256=${expected}`);
  const verdict = verifyDelivery(
    SECRET,
    { deliveryId: header(request, 'x-svc-delivery'), timestamp: header(request, 'x-svc-timestamp'), signatureTimestamped: header(request, 'x-svc-signature-timestamped') },
    request.body,
    Math.floor(Date.now() / 1000),
  );
  assert.equal(verdict, 'ok', 'the documented receiver check accepts it');
}

interface Payload {
  schema_version: number;
  deployment_id: string;
  namespace: string;
  name: string;
  kind: string;
  old_status?: string;
  new_status?: string;
  restart_count?: number;
  direction?: string;
  instance_count?: number;
  replicas?: number;
}

test('a deployment brought up on dockerd sends signed status_changed (pending→creating→running) and scaled events', async () => {
  assert.ok(server !== undefined && receiver !== undefined);
  const hook = await createWebhook(server, receiver.url('/e2e'), ['deployment.status_changed', 'deployment.scaled'], SECRET);
  const namespace = `${PREFIX}a`;
  const created = await server.request<{ id: string }>('POST', '/deployments', {
    body: {
      name: 'hooked',
      runtime: 'docker',
      namespace,
      image: BUSYBOX_IMAGE,
      command: ['sh', '-c', 'trap "exit 0" TERM; while true; do sleep 1; done'],
      replicas: 2,
      config: { image_pull_policy: 'Never' },
    },
  });
  assert.equal(created.status, 201, created.text);
  const id = created.body.id;

  const ofDeployment = () =>
    (receiver?.requests('/e2e') ?? []).filter((r) => (JSON.parse(r.body) as Payload).deployment_id === id);
  await receiver.waitFor(
    () => ofDeployment().some((r) => (JSON.parse(r.body) as Payload).new_status === 'running'),
    90_000,
    'status_changed to running',
  );
  await receiver.waitFor(
    () => ofDeployment().filter((r) => header(r, 'x-svc-event') === 'deployment.scaled').length >= 2,
    15_000,
    'two deployment.scaled events',
  );

  const requests = ofDeployment();
  for (const request of requests) {
    assert.equal(request.method, 'POST');
    assertSigned(request);
    const payload = JSON.parse(request.body) as Payload;
    assert.deepEqual(
      Object.keys(payload).slice(0, 5),
      ['schema_version', 'deployment_id', 'namespace', 'name', 'kind'],
      'the envelope comes first',
    );
    assert.equal(payload.schema_version, 1);
    assert.equal(payload.namespace, namespace);
    assert.equal(payload.name, 'hooked');
    assert.equal(payload.kind, 'worker');
  }
  const transitions = requests
    .filter((r) => header(r, 'x-svc-event') === 'deployment.status_changed')
    .map((r) => JSON.parse(r.body) as Payload)
    .map((p) => `${p.old_status}->${p.new_status}`);
  assert.ok(transitions.includes('pending->creating'), transitions.join(', '));
  assert.ok(transitions.includes('creating->running'), transitions.join(', '));
  for (const payload of requests.filter((r) => header(r, 'x-svc-event') === 'deployment.status_changed').map((r) => JSON.parse(r.body) as Payload)) {
    assert.equal(payload.restart_count, 0);
  }
  const scaled = requests
    .filter((r) => header(r, 'x-svc-event') === 'deployment.scaled')
    .map((r) => JSON.parse(r.body) as Payload)
    .map((p) => `${p.direction}:${p.instance_count}/${p.replicas}`)
    .sort();
  assert.deepEqual(scaled, ['up:1/2', 'up:2/2']);

  // Each event went out once (delivered at the first attempt; the receiver answered 200).
  const deliveryIds = requests.map((r) => header(r, 'x-svc-delivery'));
  assert.equal(new Set(deliveryIds).size, deliveryIds.length);
  const delivered = await server.request<unknown[]>('GET', `/webhooks/${hook.id}/deliveries?status=delivered`);
  assert.equal(delivered.status, 200);
});

test('an enqueue wakes the delivery worker: delivered well before its next poll', async () => {
  assert.ok(receiver !== undefined);
  const dir = mkdtempSync(join(tmpdir(), 'svc-s5t-wake-'));
  const dbPath = join(dir, 'svc.db');
  const db = openDatabase(dbPath);
  migrate(db);
  const box = createSecretBox(randomBytes(32));
  const silent = { info: () => undefined, warn: () => undefined, error: () => undefined };
  const worker = startWebhookDelivery({ db, secretBox: box }, { ...DEFAULT_DELIVERY_SETTINGS, pollIntervalMs: 60_000 }, silent);
  const other = openDatabase(dbPath); // another connection, as the scheduler or a second writer would use
  try {
    insertWebhookRow(db, box, { url: receiver.url('/wake'), events: [], secret: SECRET }, new Date());
    await new Promise((resolve) => setTimeout(resolve, 300)); // the worker's first pump found nothing and idles
    const started = Date.now();
    other.transaction(() =>
      enqueueEvent(other, webhookEvent('deployment.scaled', { id: 's5t-wake', namespace: 's5t', name: 'w', kind: 'worker' }, { direction: 'up', instance_count: 1, replicas: 1 })),
    )();
    await receiver.waitFor((r) => r.some((x) => x.path === '/wake'), 5_000, 'the woken delivery');
    assert.ok(Date.now() - started < 5_000);
    const [request] = receiver.requests('/wake');
    assert.ok(request !== undefined);
    assertSigned(request);
  } finally {
    await worker.stop();
    other.close();
    db.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
