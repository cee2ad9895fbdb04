// Serialized responses of hot list endpoints, reused until the database changes. Valid while neither this
// connection has written anything (total_changes()) nor another connection has committed (PRAGMA data_version),
// so a cached body is never stale, whatever table a write touched; any write simply empties the cache.
// Keys must include everything the body depends on besides the database (e.g. the caller's visible namespaces).
import type { Db } from '../store/db.js';

const MAX_ENTRIES = 256;

interface Cache {
  version: string;
  entries: Map<string, string>;
  versionOf: () => string;
}

const caches = new WeakMap<Db, Cache>();

function cacheFor(db: Db): Cache {
  let cache = caches.get(db);
  if (!cache) {
    const changes = db.prepare('SELECT total_changes() AS n').pluck();
    const dataVersion = db.prepare('PRAGMA data_version').pluck();
    const versionOf = () => `${String(changes.get())}:${String(dataVersion.get())}`;
    cache = { version: versionOf(), entries: new Map(), versionOf };
    caches.set(db, cache);
  }
  return cache;
}

/** The JSON text of `build()`, built at most once per database version and key. */
export function cachedJson(db: Db, key: string, build: () => unknown): string {
  const cache = cacheFor(db);
  const version = cache.versionOf();
  if (version !== cache.version) {
    cache.entries.clear();
    cache.version = version;
  }
  const hit = cache.entries.get(key);
  if (hit !== undefined) return hit;
  const text = JSON.stringify(build());
  if (cache.entries.size >= MAX_ENTRIES) cache.entries.clear();
  cache.entries.set(key, text);
  return text;
}
