// Resource quantities as written in manifests and API bodies (spec "Resources"), parsed without floating-point
// arithmetic so `0.1` cores is exactly 100_000_000 nano-CPUs. Pure; the deployment validation imports these.

const NANOS_PER_CORE = 1_000_000_000n;
const NANOS_PER_MILLICORE = 1_000_000n;
const MEMORY_MULTIPLIERS: Readonly<Record<string, bigint>> = { '': 1n, Ki: 1024n, Mi: 1024n ** 2n, Gi: 1024n ** 3n };
const MAX_QUANTITY_TEXT = 32;

function toText(value: unknown): string | null {
  if (typeof value === 'number') return Number.isFinite(value) ? String(value) : null;
  if (typeof value !== 'string' || value.length === 0 || value.length > MAX_QUANTITY_TEXT) return null;
  return value;
}

/** `digits` + optional `.fraction` scaled by `unit`, only when the result is a whole number. */
function scaleDecimal(whole: string, fraction: string, unit: bigint): bigint | null {
  const scale = 10n ** BigInt(fraction.length);
  const numerator = (BigInt(whole) * scale + BigInt(fraction === '' ? '0' : fraction)) * unit;
  if (numerator % scale !== 0n) return null;
  return numerator / scale;
}

function toPositiveSafeNumber(value: bigint | null): number | null {
  if (value === null || value <= 0n || value > BigInt(Number.MAX_SAFE_INTEGER)) return null;
  return Number(value);
}

/**
 * CPU quantity → nano-CPUs (1 core = 1e9). Accepts millicores (`500m`) and whole or fractional cores
 * (`1`, `0.5`, or the JSON numbers 1 and 0.5). Returns null for anything else, for zero, and for values finer
 * than one nano-CPU.
 */
export function parseCpuQuantity(value: unknown): number | null {
  const text = toText(value);
  if (text === null) return null;
  const milli = /^(\d+)m$/.exec(text);
  if (milli !== null) return toPositiveSafeNumber(BigInt(milli[1] ?? '0') * NANOS_PER_MILLICORE);
  const cores = /^(\d+)(?:\.(\d+))?$/.exec(text);
  if (cores === null) return null;
  return toPositiveSafeNumber(scaleDecimal(cores[1] ?? '0', cores[2] ?? '', NANOS_PER_CORE));
}

/**
 * Memory quantity → bytes. Accepts raw bytes (`268435456`) or a binary suffix `Ki`, `Mi`, `Gi`
 * (`256Mi`, `1.5Gi`). A fraction is allowed only when the result is a whole number of bytes.
 * Decimal suffixes (`K`, `M`, `G`) are refused so a typo never silently means 1000 instead of 1024.
 */
export function parseMemoryQuantity(value: unknown): number | null {
  const text = toText(value);
  if (text === null) return null;
  const match = /^(\d+)(?:\.(\d+))?(Ki|Mi|Gi)?$/.exec(text);
  if (match === null) return null;
  const unit = MEMORY_MULTIPLIERS[match[3] ?? ''];
  if (unit === undefined) return null;
  return toPositiveSafeNumber(scaleDecimal(match[1] ?? '0', match[2] ?? '', unit));
}
