// Rendering: tables, timestamps, colour. Colour only when the stream is a terminal and NO_COLOR is unset;
// JSON is never coloured.

export interface Stream {
  write(text: string): unknown;
  isTTY?: boolean;
}

export interface Output {
  stdout: Stream;
  stderr: Stream;
  /** Colour allowed on stdout. */
  color: boolean;
  /** Colour allowed on stderr (messages). */
  colorErr: boolean;
}

export function colorAllowed(stream: Stream, env: NodeJS.ProcessEnv): boolean {
  return stream.isTTY === true && env.NO_COLOR === undefined;
}

const CODES = { red: 31, green: 32, yellow: 33, bold: 1, dim: 2 } as const;
export type Color = keyof typeof CODES;

export function paint(text: string, color: Color, enabled: boolean): string {
  return enabled ? `\x1b[${CODES[color]}m${text}\x1b[0m` : text;
}

const ANSI = /\x1b\[[0-9;]*m/g;
export function visibleLength(text: string): number {
  return [...text.replace(ANSI, '')].length;
}

export function statusColor(status: string): Color {
  if (status === 'running' || status === 'completed' || status === 'active' || status === 'success') return 'green';
  if (status === 'pending' || status === 'creating' || status === 'deleted' || status === 'expired' || status === 'revoked' || status === 'warning') {
    return 'yellow';
  }
  return 'red';
}

export function renderTable(headers: readonly string[], rows: readonly (readonly string[])[]): string {
  const widths = headers.map((h, i) => Math.max(visibleLength(h), ...rows.map((r) => visibleLength(r[i] ?? ''))));
  const line = (cells: readonly string[]) =>
    cells
      .map((cell, i) => (i === cells.length - 1 ? cell : cell + ' '.repeat(widths[i]! - visibleLength(cell))))
      .join('   ')
      .trimEnd();
  return `${[line(headers.map((h) => h.toUpperCase())), ...rows.map(line)].join('\n')}\n`;
}

/** RFC 3339 → `YYYY-MM-DD HH:MM:SS` in UTC; anything unparsable is shown as given; absent as `-`. */
export function formatTime(value: unknown): string {
  if (typeof value !== 'string' || value === '') return '-';
  const date = new Date(value);
  if (Number.isNaN(date.getTime())) return value;
  return date.toISOString().slice(0, 19).replace('T', ' ');
}

export function json(value: unknown): string {
  return `${JSON.stringify(value, null, 2)}\n`;
}

// Accessors over untyped API records: the CLI renders what the server sends without trusting its shape.
export type ApiRecord = Record<string, unknown>;

export function isRecord(value: unknown): value is ApiRecord {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function records(value: unknown): ApiRecord[] {
  return Array.isArray(value) ? value.filter(isRecord) : [];
}

export function text(record: ApiRecord, key: string, fallback = '-'): string {
  const value = record[key];
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return fallback;
}

export function num(record: ApiRecord, key: string): number | undefined {
  const value = record[key];
  return typeof value === 'number' && Number.isFinite(value) ? value : undefined;
}

export function strings(record: ApiRecord, key: string): string[] {
  const value = record[key];
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : [];
}

export function sub(record: ApiRecord, key: string): ApiRecord {
  const value = record[key];
  return isRecord(value) ? value : {};
}
