// Parsing of the routes file of the `config` provider: `entrypoints: [ <Entrypoint as in the API body> ]`,
// YAML or JSON (JSON is YAML). Pure.
import { describe, isRecord } from '../../config/checks.js';
import { parseYamlSource } from '../../config/yaml-source.js';
import { diagnostic, scoped } from '../../diagnostics/diagnostic.js';
import { normalizeDefinitions, type ProviderState } from '../provider.js';

/** Null state = the file is broken as a whole; `error` then holds the E003 diagnostic to raise. */
export function parseRoutesFile(text: string, file: string): { state: ProviderState | null; error: ProviderState['diagnostics'][number] | null } {
  const source = parseYamlSource(text, file);
  const broken = (message: string) => ({ state: null, error: scoped(null, diagnostic('E003', message, { hint: 'the previous routes of this file stay in service' })) });
  if (source.syntaxErrors.length > 0) return broken(source.syntaxErrors.join('; '));
  const doc = source.value;
  if (doc === null || doc === undefined) return { state: { entrypoints: [], diagnostics: [] }, error: null };
  if (!isRecord(doc)) return broken(`${source.locate([], 'value')}: must be a map with the key "entrypoints", got ${describe(doc)}`);
  const unknown = Object.keys(doc).find((key) => key !== 'entrypoints');
  if (unknown !== undefined) return broken(`${source.locate([unknown], 'key')}: unknown key "${unknown}" (allowed: entrypoints)`);
  const list = doc.entrypoints ?? [];
  if (!Array.isArray(list)) return broken(`${source.locate(['entrypoints'], 'value')}: entrypoints must be a list, got ${describe(list)}`);
  const state = normalizeDefinitions(list, {
    source: 'config',
    origin: file,
    listPath: ['entrypoints'],
    locate: (path) => source.locate(path, 'value'),
  });
  return { state, error: null };
}
