// What /metrics serves: an ordered list of sources, each returning metric families at scrape time. The inventory
// source reads the database; per-deployment series (deployments issue) register a source that returns the
// values its background refresher cached, so a scrape never waits on the runtime.
import type { MetricFamily } from './exposition.js';

export type MetricsSource = () => readonly MetricFamily[];

export interface MetricsRegistry {
  addSource(source: MetricsSource): void;
  collect(): MetricFamily[];
}

export function createMetricsRegistry(): MetricsRegistry {
  const sources: MetricsSource[] = [];
  return {
    addSource(source) {
      sources.push(source);
    },
    collect: () => sources.flatMap((source) => source()),
  };
}
