// `$VAR` interpolation for manifests. Pure. One left-to-right scan, so:
// - `$A` never touches `$AB`: a name is always the LONGEST run of [A-Za-z0-9_] after `$`;
// - substituted values are never scanned again (a value containing `$X` stays literal);
// - `$$` is a literal `$`; a `$` not followed by a name or `{` stays literal (`$5`, `a$`, `$-`).
// Forms: `$NAME`, `${NAME}`, `${NAME:-default}` (unset or empty → default), `${NAME-default}` (unset → default).
// An undefined variable without a default is an error: every one is reported, nothing is applied.

export type Lookup = (name: string) => string | undefined;

export interface Interpolated {
  value: string;
  /** Names used without a value and without a default. */
  missing: string[];
  /** Syntax problems, e.g. an unterminated `${`. */
  errors: string[];
}

const NAME_START = /[A-Za-z_]/;
const NAME_CHAR = /[A-Za-z0-9_]/;
const NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

export function interpolate(input: string, lookup: Lookup): Interpolated {
  const missing: string[] = [];
  const errors: string[] = [];
  let out = '';
  let i = 0;
  while (i < input.length) {
    const ch = input[i]!;
    if (ch !== '$') {
      out += ch;
      i += 1;
      continue;
    }
    const next = input[i + 1];
    if (next === '$') {
      out += '$';
      i += 2;
      continue;
    }
    if (next === '{') {
      const close = input.indexOf('}', i + 2);
      if (close === -1) {
        errors.push(`unterminated '\${' in '${input}'`);
        out += input.slice(i);
        break;
      }
      const body = input.slice(i + 2, close);
      const operator = /^([^:-]*)(:-|-)([\s\S]*)$/.exec(body);
      const name = operator ? operator[1]! : body;
      if (!NAME.test(name)) {
        errors.push(`invalid variable name '\${${body}}' in '${input}'`);
        out += input.slice(i, close + 1);
        i = close + 1;
        continue;
      }
      const value = lookup(name);
      if (operator) {
        const useDefault = operator[2] === ':-' ? value === undefined || value === '' : value === undefined;
        out += useDefault ? operator[3]! : value!;
      } else if (value === undefined) {
        missing.push(name);
      } else out += value;
      i = close + 1;
      continue;
    }
    if (next !== undefined && NAME_START.test(next)) {
      let end = i + 2;
      while (end < input.length && NAME_CHAR.test(input[end]!)) end += 1;
      const name = input.slice(i + 1, end);
      const value = lookup(name);
      if (value === undefined) missing.push(name);
      else out += value;
      i = end;
      continue;
    }
    out += '$';
    i += 1;
  }
  return { value: out, missing, errors };
}

export interface EnvFileResult {
  values: Map<string, string>;
  errors: string[];
}

/**
 * Pure: `KEY=VALUE` lines. Blank lines and `#` comments are skipped; `export ` is allowed; `"..."` values
 * understand \n, \t, \" and \\; `'...'` values are literal; unquoted values are trimmed and end at ` #`.
 * Values are taken as written: no interpolation inside the env file.
 */
export function parseEnvFile(text: string, source: string): EnvFileResult {
  const values = new Map<string, string>();
  const errors: string[] = [];
  text.split(/\r?\n/).forEach((rawLine, index) => {
    const line = rawLine.trim();
    if (line === '' || line.startsWith('#')) return;
    const body = line.startsWith('export ') ? line.slice(7).trimStart() : line;
    const eq = body.indexOf('=');
    const where = `${source}:${index + 1}`;
    if (eq === -1) {
      errors.push(`${where}: expected KEY=VALUE`);
      return;
    }
    const key = body.slice(0, eq).trim();
    if (!NAME.test(key)) {
      errors.push(`${where}: invalid variable name '${key}'`);
      return;
    }
    let value = body.slice(eq + 1).trim();
    if (value.startsWith('"')) {
      const end = findClosingQuote(value);
      if (end === -1) {
        errors.push(`${where}: unterminated double quote`);
        return;
      }
      value = value.slice(1, end).replace(/\\([nt"\\])/g, (_, c: string) => (c === 'n' ? '\n' : c === 't' ? '\t' : c));
    } else if (value.startsWith("'")) {
      const end = value.indexOf("'", 1);
      if (end === -1) {
        errors.push(`${where}: unterminated single quote`);
        return;
      }
      value = value.slice(1, end);
    } else {
      const comment = value.indexOf(' #');
      if (comment !== -1) value = value.slice(0, comment).trimEnd();
    }
    values.set(key, value);
  });
  return { values, errors };
}

function findClosingQuote(value: string): number {
  for (let i = 1; i < value.length; i += 1) {
    if (value[i] === '\\') i += 1;
    else if (value[i] === '"') return i;
  }
  return -1;
}

/** Env files win over the process environment (the explicit flag beats ambient state); later files win. */
export function buildLookup(env: NodeJS.ProcessEnv, files: readonly Map<string, string>[]): Lookup {
  return (name) => {
    for (let i = files.length - 1; i >= 0; i -= 1) {
      const value = files[i]!.get(name);
      if (value !== undefined) return value;
    }
    return env[name];
  };
}
