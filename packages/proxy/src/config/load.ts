// Reads config.yaml from disk and turns every problem into an E001/E002 diagnostic with file:line:column.
import { readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { basename, dirname, extname, resolve } from 'node:path';
import { diagnostic, type Diagnostic } from '../diagnostics/diagnostic.js';
import { formatIssue } from './checks.js';
import { parseProxyConfig, type ProxyConfig } from './config-schema.js';
import { parseYamlSource } from './yaml-source.js';

export interface LoadedConfig {
  config: ProxyConfig | null;
  /** Absolute path of the file. */
  file: string;
  /** Errors that prevent start-up (empty when config is non-null). */
  errors: Diagnostic[];
}

const MAX_CONFIG_BYTES = 4 * 1024 * 1024;

/** Pure part: text of config.yaml → config or errors. */
export function parseConfigText(text: string, file: string, defaultWorkers: number): LoadedConfig {
  const source = parseYamlSource(text, file);
  if (source.syntaxErrors.length > 0) {
    return { config: null, file, errors: source.syntaxErrors.map((message) => diagnostic('E001', message)) };
  }
  const ext = extname(file);
  const { config, issues } = parseProxyConfig(source.value, {
    baseDir: dirname(file),
    configStem: basename(file, ext),
    defaultWorkers,
  });
  const errors = issues.map((issue) => diagnostic('E001', `${source.locate(issue.path, issue.at)}: ${formatIssue(issue)}`));
  if (config && config.api.enabled && config.api.users.length === 0) {
    errors.push(
      diagnostic('E002', `${source.locate(['api', 'users'], 'key')}: api.enabled is true but api.users is empty; the management API has no anonymous mode`, {
        hint: 'add a user {name, hash, role} or set api.enabled: false',
      }),
    );
  }
  return { config: errors.length === 0 ? config : null, file, errors };
}

export function loadConfigFile(path: string): LoadedConfig {
  const file = resolve(path);
  let text: string;
  try {
    const buffer = readFileSync(file);
    if (buffer.length > MAX_CONFIG_BYTES) {
      return { config: null, file, errors: [diagnostic('E001', `${file}: larger than ${MAX_CONFIG_BYTES} bytes`)] };
    }
    text = buffer.toString('utf8');
  } catch (error) {
    const reason = error instanceof Error && 'code' in error ? String(error.code) : String(error);
    return { config: null, file, errors: [diagnostic('E001', `${file}: cannot read the configuration file (${reason})`)] };
  }
  return parseConfigText(text, file, availableParallelism());
}
