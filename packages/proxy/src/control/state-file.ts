// Persistence of API-created entrypoints: a JSON file next to config.yaml, replaced atomically (write a
// temporary file, fsync, rename) so a kill at any moment leaves either the old or the new version.
import { closeSync, fsyncSync, openSync, readFileSync, renameSync, writeSync } from 'node:fs';
import { parseEntrypoint } from '../config/entrypoint-schema.js';
import { isRecord } from '../config/checks.js';
import type { Entrypoint } from '../model/entrypoint.js';

export interface ApiEntrypointStore {
  load(): Entrypoint[];
  save(entrypoints: readonly Entrypoint[]): void;
}

const FORMAT_VERSION = 1;

export class StateFile implements ApiEntrypointStore {
  constructor(readonly path: string) {}

  /** A missing file is an empty state; a corrupt one is an error (never silently discard operator data). */
  load(): Entrypoint[] {
    let text: string;
    try {
      text = readFileSync(this.path, 'utf8');
    } catch (error) {
      if (error instanceof Error && 'code' in error && error.code === 'ENOENT') return [];
      throw error;
    }
    const parsed: unknown = JSON.parse(text);
    if (!isRecord(parsed) || parsed.version !== FORMAT_VERSION || !Array.isArray(parsed.entrypoints)) {
      throw new Error(`${this.path}: not a svc-proxy state file (version ${FORMAT_VERSION})`);
    }
    return parsed.entrypoints.map((raw, index) => {
      const result = parseEntrypoint(raw, { source: 'api', requireCoreConfigFields: false });
      if (!result.entrypoint) throw new Error(`${this.path}: entrypoints[${index}] is invalid: ${result.issues.map((i) => i.message).join('; ')}`);
      return result.entrypoint;
    });
  }

  save(entrypoints: readonly Entrypoint[]): void {
    const temporary = `${this.path}.${process.pid}.tmp`;
    const fd = openSync(temporary, 'w', 0o600);
    try {
      writeSync(fd, `${JSON.stringify({ version: FORMAT_VERSION, entrypoints }, null, 2)}\n`);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(temporary, this.path);
  }
}

export class MemoryStore implements ApiEntrypointStore {
  saved: Entrypoint[] = [];
  load(): Entrypoint[] {
    return [...this.saved];
  }
  save(entrypoints: readonly Entrypoint[]): void {
    this.saved = [...entrypoints];
  }
}
