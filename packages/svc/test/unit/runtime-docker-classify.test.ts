import { test } from 'node:test';
import assert from 'node:assert/strict';
import { classifyDockerFailure, dockerFailureFacts, redactSecrets } from '../../src/runtime/docker/classify.js';

const facts = (statusCode: number | null, message: string, code: string | null = null) => ({ statusCode, message, code });

test('a daemon that cannot be reached is a transient generic error in every phase', () => {
  for (const phase of ['pull', 'create', 'start', 'network', 'volume', 'other'] as const) {
    assert.deepEqual(classifyDockerFailure(phase, facts(null, 'connect ENOENT /var/run/docker.sock', 'ENOENT')), { status: 'error', category: 'transient' });
  }
  assert.deepEqual(classifyDockerFailure('pull', facts(null, 'connect ECONNREFUSED', 'ECONNREFUSED')), { status: 'error', category: 'transient' });
});

test('pull: unknown image or refused credentials are the user\'s; registry trouble is transient', () => {
  assert.deepEqual(classifyDockerFailure('pull', facts(404, 'pull access denied for nope, repository does not exist or may require \'docker login\'')), { status: 'image_pull_back_off', category: 'user' });
  assert.deepEqual(classifyDockerFailure('pull', facts(null, 'manifest for busybox:nope not found: manifest unknown: manifest unknown')), { status: 'image_pull_back_off', category: 'user' });
  assert.deepEqual(classifyDockerFailure('pull', facts(500, 'Head "https://r/v2/x/manifests/1": unauthorized: incorrect username or password')), { status: 'image_pull_back_off', category: 'user' });
  assert.deepEqual(classifyDockerFailure('pull', facts(400, 'invalid reference format')), { status: 'image_pull_back_off', category: 'user' });
  assert.deepEqual(classifyDockerFailure('pull', facts(500, 'Head "http://r/v2/a/manifests/1": no basic auth credentials')), { status: 'image_pull_back_off', category: 'user' });
  assert.deepEqual(classifyDockerFailure('pull', facts(500, 'Get "https://registry-1.docker.io/v2/": dial tcp: lookup registry-1.docker.io: no such host')), { status: 'image_pull_back_off', category: 'transient' });
  assert.deepEqual(classifyDockerFailure('pull', facts(500, 'Get "http://127.0.0.1:1/v2/": dial tcp 127.0.0.1:1: connect: connection refused')), { status: 'image_pull_back_off', category: 'transient' });
});

test('network and volume failures map to their own statuses', () => {
  assert.deepEqual(classifyDockerFailure('network', facts(500, 'could not find an available, non-overlapping IPv4 address pool')), { status: 'network_error', category: 'host' });
  assert.deepEqual(classifyDockerFailure('network', facts(409, 'network with name svc_a already exists')), { status: 'network_error', category: 'transient' });
  assert.deepEqual(classifyDockerFailure('volume', facts(404, 'plugin "nfsx" not found')), { status: 'file_system_error', category: 'user' });
  assert.deepEqual(classifyDockerFailure('volume', facts(500, 'mkdir /var/lib/docker/volumes/x: no space left on device')), { status: 'file_system_error', category: 'host' });
});

test('create/start: mount problems are file-system errors, not create errors', () => {
  assert.deepEqual(classifyDockerFailure('create', facts(400, 'invalid mount config for type "bind": bind source path does not exist: /nope')), { status: 'file_system_error', category: 'user' });
  assert.deepEqual(
    classifyDockerFailure('start', facts(400, 'OCI runtime create failed: error mounting "/tmp/x" to rootfs at "/etc/x": mount /tmp/x:/etc/x: not a directory')),
    { status: 'file_system_error', category: 'user' },
  );
  assert.deepEqual(classifyDockerFailure('start', facts(500, 'error while mounting volume: read-only file system')), { status: 'file_system_error', category: 'host' });
});

test('create/start: resource, conflict, port and config rejections', () => {
  assert.deepEqual(classifyDockerFailure('create', facts(400, 'Range of CPUs is from 0.01 to 2.00, as there are only 2 CPUs available')), { status: 'insufficient_resources', category: 'user' });
  assert.deepEqual(classifyDockerFailure('start', facts(500, 'OCI runtime create failed: cannot allocate memory')), { status: 'insufficient_resources', category: 'user' });
  assert.deepEqual(classifyDockerFailure('create', facts(409, 'Conflict. The container name "/a_b_12345678" is already in use')), { status: 'create_container_error', category: 'transient' });
  assert.deepEqual(classifyDockerFailure('start', facts(500, 'driver failed programming external connectivity: Bind for 0.0.0.0:8080 failed: port is already allocated')), { status: 'create_container_error', category: 'user' });
  assert.deepEqual(classifyDockerFailure('create', facts(400, 'Minimum memory limit allowed is 6MB')), { status: 'create_container_error', category: 'user' });
  assert.deepEqual(classifyDockerFailure('create', facts(404, 'No such image: nope:latest')), { status: 'image_pull_back_off', category: 'user' });
  assert.deepEqual(classifyDockerFailure('start', facts(400, 'OCI runtime create failed: exec: "nope": executable file not found in $PATH')), { status: 'create_container_error', category: 'user' });
  assert.deepEqual(classifyDockerFailure('create', facts(500, 'something odd happened')), { status: 'create_container_error', category: 'host' });
});

test('anything else is the generic error', () => {
  assert.deepEqual(classifyDockerFailure('other', facts(500, 'json: cannot unmarshal')), { status: 'error', category: 'host' });
});

test('facts are read from dockerode errors, plain errors and non-errors', () => {
  assert.deepEqual(dockerFailureFacts({ statusCode: 404, json: { message: 'No such container: x' }, message: '(HTTP code 404) no such container' }), facts(404, 'No such container: x'));
  assert.deepEqual(dockerFailureFacts({ statusCode: 500, json: 'plain text body\n', message: 'x' }), facts(500, 'plain text body'));
  assert.deepEqual(dockerFailureFacts(Object.assign(new Error('connect ENOENT'), { code: 'ENOENT' })), facts(null, 'connect ENOENT', 'ENOENT'));
  assert.deepEqual(dockerFailureFacts('boom'), facts(null, 'boom'));
  assert.deepEqual(
    dockerFailureFacts({ statusCode: 500, json: null, message: '(HTTP code 500) server error - Head "http://r/v2/a/manifests/1": no basic auth credentials ' }),
    facts(500, 'Head "http://r/v2/a/manifests/1": no basic auth credentials'),
  );
  assert.deepEqual(dockerFailureFacts(null), facts(null, 'null'));
});

test('secret values are redacted, longest first, short values left alone', () => {
  assert.equal(redactSecrets('env PASSWORD=hunter22 and hunter2 x', ['hunter2', 'hunter22', 'x']), 'env PASSWORD=[redacted] and [redacted] x');
  assert.equal(redactSecrets('no secrets here', []), 'no secrets here');
});
