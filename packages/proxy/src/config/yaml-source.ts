// Maps problems found in plain data parsed from a YAML (or JSON) file back to `file:line:column`.
import { isMap, isSeq, LineCounter, parseDocument, type Document } from 'yaml';
import type { Issue, Path } from './checks.js';

export interface ParsedYaml {
  /** The plain value, or undefined when the text has syntax errors. */
  value: unknown;
  /** Syntax errors, already formatted as `file:line:column: message`. */
  syntaxErrors: string[];
  /** `file:line:column` of the node at `path` (closest existing ancestor when the path does not exist). */
  locate(path: Path, at: Issue['at']): string;
}

interface Ranged {
  range?: [number, number, number] | null;
}

export function parseYamlSource(text: string, file: string): ParsedYaml {
  const lineCounter = new LineCounter();
  const doc: Document = parseDocument(text, { lineCounter, prettyErrors: false, uniqueKeys: true });
  const where = (offset: number): string => {
    const pos = lineCounter.linePos(offset);
    return `${file}:${pos.line}:${pos.col}`;
  };
  const syntaxErrors = doc.errors.map((error) => `${where(error.pos[0])}: ${error.message.split('\n')[0] ?? error.message}`);
  let value: unknown;
  if (syntaxErrors.length === 0) {
    try {
      value = doc.toJS({ maxAliasCount: 100 });
    } catch (error) {
      syntaxErrors.push(`${file}:1:1: ${error instanceof Error ? error.message : String(error)}`);
    }
  }
  const locate = (path: Path, at: Issue['at']): string => {
    let node: unknown = doc.contents;
    let offset = (doc.contents as Ranged | null)?.range?.[0] ?? 0;
    for (let i = 0; i < path.length; i++) {
      const segment = path[i];
      const last = i === path.length - 1;
      if (isMap(node)) {
        const pair = node.items.find((item) => {
          const key: unknown = item.key;
          const keyValue = key !== null && typeof key === 'object' && 'value' in key ? key.value : key;
          return String(keyValue) === String(segment);
        });
        if (!pair) break;
        const keyNode = pair.key as Ranged | null;
        const valueNode = pair.value as Ranged | null;
        if (last && at === 'key') {
          offset = keyNode?.range?.[0] ?? offset;
          break;
        }
        offset = valueNode?.range?.[0] ?? keyNode?.range?.[0] ?? offset;
        node = pair.value;
      } else if (isSeq(node) && typeof segment === 'number') {
        const item = node.items[segment] as Ranged | undefined;
        if (!item) break;
        offset = item.range?.[0] ?? offset;
        node = item;
      } else {
        break;
      }
    }
    return where(offset);
  };
  return { value, syntaxErrors, locate };
}
