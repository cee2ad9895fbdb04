// The `config` provider: entrypoints from a routes file, reloaded on change without a restart.
import { watch, type FSWatcher } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import { basename, dirname } from 'node:path';
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

export class ConfigProvider implements Provider {
  readonly name = 'config' as const;
  private watcher: FSWatcher | null = null;
  private timer: NodeJS.Timeout | null = null;
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
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.loading;
  }

  private startWatching(): void {
    const file = this.options.path;
    const name = basename(file);
    try {
      // The directory, not the file: editors and `mv` replace the file (new inode), which a file watch misses.
      this.watcher = watch(dirname(file), { persistent: true }, (_event, changed) => {
        if (changed === null || changed.toString() === name) this.schedule();
      });
      this.watcher.on('error', () => {
        this.watcher?.close();
        this.watcher = null;
      });
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
      if (!this.stopped) this.emit?.(state);
    });
    return this.loading;
  }

  private async readState(): Promise<ProviderState> {
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
    const { state, error } = parseRoutesFile(text, file);
    if (state === null) return { entrypoints: this.lastGood.entrypoints, diagnostics: [...this.lastGood.diagnostics, ...(error ? [error] : [])] };
    this.lastGood = state;
    return state;
  }

  private broken(message: string): ProviderState {
    return {
      entrypoints: this.lastGood.entrypoints,
      diagnostics: [...this.lastGood.diagnostics, scoped(null, diagnostic('E003', message, { hint: 'the previous routes of this file stay in service' }))],
    };
  }
}
