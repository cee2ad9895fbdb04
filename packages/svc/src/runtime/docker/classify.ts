// Turns a Docker Engine failure into the deployment status it causes (spec "States and transitions").
// Pure: works on the plain facts of an error (HTTP status, message, socket error code) so every rule is
// unit-tested without a daemon.

import type { FailureCategory, FailureStatus } from '../runtime.js';

/** Which step of bringing an instance up failed; the same message means different things in different steps. */
export type DockerPhase = 'pull' | 'image' | 'network' | 'volume' | 'create' | 'start' | 'other';

export interface DockerFailureFacts {
  /** HTTP status the Engine API answered, or null when no answer came (socket error, stream error). */
  statusCode: number | null;
  message: string;
  /** Node socket error code (`ECONNREFUSED`, `ENOENT`, ...) when the daemon could not be reached. */
  code: string | null;
}

export interface Classification {
  status: FailureStatus;
  category: FailureCategory;
}

const DAEMON_UNREACHABLE_CODES = new Set(['ECONNREFUSED', 'ENOENT', 'ECONNRESET', 'EPIPE', 'EACCES', 'ETIMEDOUT']);

const PULL_USER_FAULT =
  /not found|manifest unknown|does not exist|pull access denied|unauthorized|authentication required|access denied|denied:|invalid reference format|no such image|incorrect username or password|no basic auth credentials/i;
const MOUNT_FAULT =
  /bind source path does not exist|invalid mount config|error (?:while )?mounting|mount(?:ing)? .*(?:not a directory|no such file)|are you trying to mount a directory onto a file|read-only file system|volume .*(?:not found|in use)/i;
const HOST_CPU_OR_MEMORY_EXCEEDED = /range of cpus is from|cannot allocate memory|out of memory|insufficient memory/i;
const PORT_TAKEN = /port is already allocated|address already in use/i;

/** Reads the facts out of whatever dockerode or a stream rejected with; never throws. */
export function dockerFailureFacts(error: unknown): DockerFailureFacts {
  if (typeof error !== 'object' || error === null) {
    return { statusCode: null, message: String(error), code: null };
  }
  const record = error as Record<string, unknown>;
  const statusCode = typeof record['statusCode'] === 'number' ? record['statusCode'] : null;
  const code = typeof record['code'] === 'string' ? record['code'] : null;
  const json = record['json'];
  let message = '';
  if (typeof json === 'object' && json !== null && typeof (json as Record<string, unknown>)['message'] === 'string') {
    message = (json as Record<string, string>)['message'] ?? '';
  } else if (typeof json === 'string' && json.trim() !== '') {
    message = json.trim();
  } else if (typeof record['message'] === 'string') {
    // docker-modem's own wording when the body was not JSON: "(HTTP code 500) server error - <body>".
    message = record['message'].replace(/^\(HTTP code \d+\) [^-]*- /, '').trim();
  }
  return { statusCode, message, code };
}

/** The status and blame for a failure in `phase`. */
export function classifyDockerFailure(phase: DockerPhase, facts: DockerFailureFacts): Classification {
  if (facts.statusCode === null && facts.code !== null && DAEMON_UNREACHABLE_CODES.has(facts.code)) {
    return { status: 'error', category: 'transient' };
  }
  const message = facts.message;
  switch (phase) {
    case 'pull':
    case 'image':
      // A missing tag or refused credentials will not fix themselves; a registry that cannot be reached might.
      if (facts.statusCode === 404 || facts.statusCode === 401 || facts.statusCode === 403 || PULL_USER_FAULT.test(message)) {
        return { status: 'image_pull_back_off', category: 'user' };
      }
      return { status: 'image_pull_back_off', category: 'transient' };
    case 'network':
      return { status: 'network_error', category: facts.statusCode === 409 ? 'transient' : 'host' };
    case 'volume':
      if (/plugin .*not found|no such (?:volume )?driver/i.test(message)) return { status: 'file_system_error', category: 'user' };
      return { status: 'file_system_error', category: 'host' };
    case 'create':
    case 'start':
      if (MOUNT_FAULT.test(message)) {
        return { status: 'file_system_error', category: /permission denied|read-only file system/i.test(message) ? 'host' : 'user' };
      }
      if (HOST_CPU_OR_MEMORY_EXCEEDED.test(message)) return { status: 'insufficient_resources', category: 'user' };
      if (phase === 'create' && facts.statusCode === 404 && /no such image/i.test(message)) {
        return { status: 'image_pull_back_off', category: 'user' };
      }
      if (facts.statusCode === 409) return { status: 'create_container_error', category: 'transient' };
      if (PORT_TAKEN.test(message)) return { status: 'create_container_error', category: 'user' };
      if (facts.statusCode !== null && facts.statusCode >= 400 && facts.statusCode < 500) {
        return { status: 'create_container_error', category: 'user' };
      }
      if (/executable file not found|exec format error|no such file or directory/i.test(message)) {
        return { status: 'create_container_error', category: 'user' };
      }
      return { status: 'create_container_error', category: 'host' };
    case 'other':
      return { status: 'error', category: 'host' };
  }
}

const MIN_REDACTED_LENGTH = 3;

/**
 * Removes every secret-bearing value (environment values, registry password) from a message. Values shorter
 * than three characters are left alone: they carry no secret and would shred the message.
 */
export function redactSecrets(message: string, secrets: Iterable<string>): string {
  const ordered = [...new Set(secrets)].filter((s) => s.length >= MIN_REDACTED_LENGTH).sort((a, b) => b.length - a.length);
  let result = message;
  for (const secret of ordered) result = result.split(secret).join('[redacted]');
  return result;
}
