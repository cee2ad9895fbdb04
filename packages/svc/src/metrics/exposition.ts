// Pure rendering of metric families: Prometheus text format 0.0.4 and the equivalent JSON object.
export type MetricType = 'gauge' | 'counter';

export interface Sample {
  labels: Readonly<Record<string, string>>;
  value: number;
}

export interface MetricFamily {
  name: string;
  help: string;
  type: MetricType;
  samples: readonly Sample[];
}

export const PROMETHEUS_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

function escapeLabelValue(value: string): string {
  return value.replace(/\\/g, '\\\\').replace(/\n/g, '\\n').replace(/"/g, '\\"');
}

function escapeHelp(value: string): string {
  return value.replace(/\\/g, '\\\\').replace(/\n/g, '\\n');
}

function formatValue(value: number): string {
  if (Number.isNaN(value)) return 'NaN';
  if (value === Infinity) return '+Inf';
  if (value === -Infinity) return '-Inf';
  return String(value);
}

export function renderPrometheus(families: readonly MetricFamily[]): string {
  const lines: string[] = [];
  for (const family of families) {
    lines.push(`# HELP ${family.name} ${escapeHelp(family.help)}`);
    lines.push(`# TYPE ${family.name} ${family.type}`);
    for (const sample of family.samples) {
      const labels = Object.entries(sample.labels);
      const labelText = labels.length === 0 ? '' : `{${labels.map(([k, v]) => `${k}="${escapeLabelValue(v)}"`).join(',')}}`;
      lines.push(`${family.name}${labelText} ${formatValue(sample.value)}`);
    }
  }
  return lines.join('\n') + '\n';
}

export type JsonMetricValue = number | Record<string, number> | Array<{ labels: Record<string, string>; value: number }>;

/**
 * The same values as one JSON object keyed by series name: an unlabelled series is a number; a series with one
 * label is an object from label value to number (`{"running": 2, ...}`); a series with several labels is a list of
 * `{labels, value}`.
 */
export function renderJson(families: readonly MetricFamily[]): Record<string, JsonMetricValue> {
  const out: Record<string, JsonMetricValue> = {};
  for (const family of families) {
    const labelNames = new Set(family.samples.flatMap((s) => Object.keys(s.labels)));
    if (labelNames.size === 0) {
      out[family.name] = family.samples[0]?.value ?? 0;
    } else if (labelNames.size === 1) {
      const [label] = [...labelNames] as [string];
      const byValue: Record<string, number> = {};
      for (const sample of family.samples) byValue[sample.labels[label] ?? ''] = sample.value;
      out[family.name] = byValue;
    } else {
      out[family.name] = family.samples.map((s) => ({ labels: { ...s.labels }, value: s.value }));
    }
  }
  return out;
}
