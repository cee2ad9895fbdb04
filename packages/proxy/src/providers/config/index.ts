// The `config` provider: entrypoints from a routes file, reloaded on change without a restart.
import { watch, type FSWatcher } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import { dirname } from 'node:path';
import { diagnostic, scoped } from '../../diagnostics/diagnostic.js';
import type { Provider, ProviderState } from '../provider.js';
import { parseRoutesFile } from './routes-file.js';

export interface ConfigProviderOptions {
  path: string;
  watch: boolean;
  /** Coalesces the bursts of events an editor's save produces. */
  debounceMs?: number;
}

const MAX_ROUTES_BYTES = 16 * 1024 * 1024;
const FALLBACK_POLL_MS = 1_000;

export class ConfigProvider implements Provider {
  readonly name = 'config' as const;
  private watcher: FSWatcher | null = null;
  private timer: NodeJS.Timeout | null = null;
  private fallback: NodeJS.Timeout | null = null;
  /** Text of the last successful load, to skip re-applying an unchanged file. */
  private lastText: string | null = null;
  private lastFailed = false;
  private lastGood: ProviderState = { entrypoints: [], diagnostics: [] };
  private emit: ((state: ProviderState) => void) | null = null;
  private loading: Promise<void> = Promise.resolve();
  private pending = false;
  private stopped = false;

  constructor(private readonly options: ConfigProviderOptions) {}

  async start(emit: (state: ProviderState) => void): Promise<void> {
    this.emit = emit;
    if (this.options.watch) this.startWatching();
    await this.reload();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.watcher?.close();
    this.watcher = null;
    if (this.fallback) clearInterval(this.fallback);
    this.fallback = null;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.loading;
  }

  /**
   * Watches the directory, not the file: editors and `mv` replace the file (new inode), and Kubernetes ConfigMap
   * volumes swap a `..data` symlink, both of which a watch on the file itself misses. Any event in the
   * directory triggers a (debounced) re-read; an unchanged content is not re-applied. When the directory cannot
   * be watched (missing, watch limit reached) the file is polled instead until a watch can be set up.
   */
  private startWatching(): void {
    this.tryWatch();
    this.fallback = setInterval(() => {
      if (this.watcher !== null) return;
      this.tryWatch();
      this.schedule();
    }, FALLBACK_POLL_MS);
    this.fallback.unref();
  }

  private tryWatch(): void {
    try {
      const watcher = watch(dirname(this.options.path), { persistent: false }, () => this.schedule());
      watcher.on('error', () => {
        watcher.close();
        if (this.watcher === watcher) this.watcher = null;
      });
      this.watcher = watcher;
    } catch {
      this.watcher = null; // the missing directory is reported by reload()
    }
  }

  private schedule(): void {
    if (this.stopped) return;
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.timer = null;
      void this.reload();
    }, this.options.debounceMs ?? 50);
  }

  /** Serialized: a change during a load triggers exactly one more load afterwards. */
  private reload(): Promise<void> {
    if (this.pending) return this.loading;
    this.pending = true;
    this.loading = this.loading.then(async () => {
      this.pending = false;
      if (this.stopped) return;
      const state = await this.readState();
      if (state !== null && !this.stopped) this.emit?.(state);
    });
    return this.loading;
  }

  /** Null when the file is unchanged since the last good load. */
  private async readState(): Promise<ProviderState | null> {
    const file = this.options.path;
    let text: string;
    try {
      const info = await stat(file);
      if (info.size > MAX_ROUTES_BYTES) return this.broken(`${file}:1:1: larger than ${MAX_ROUTES_BYTES} bytes`);
      text = await readFile(file, 'utf8');
    } catch (error) {
      const code = error instanceof Error && 'code' in error ? String(error.code) : String(error);
      return this.broken(`${file}:1:1: cannot read the routes file (${code})`);
    }
    if (text === this.lastText && !this.lastFailed) return null;
    const { state, error } = parseRoutesFile(text, file);
    if (state === null) {
      this.lastFailed = true;
      return { entrypoints: this.lastGood.entrypoints, diagnostics: [...this.lastGood.diagnostics, ...(error ? [error] : [])] };
    }
    this.lastGood = state;
    this.lastText = text;
    this.lastFailed = false;
    return state;
  }

  private broken(message: string): ProviderState {
    this.lastFailed = true;
    return {
      entrypoints: this.lastGood.entrypoints,
      diagnostics: [...this.lastGood.diagnostics, scoped(null, diagnostic('E003', message, { hint: 'the previous routes of this file stay in service' }))],
    };
  }
}
