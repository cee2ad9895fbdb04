// Serialized responses of hot list endpoints, reused until the database changes. Valid while neither this
// connection has written anything (total_changes()) nor another connection has committed (PRAGMA data_version),
// so a cached body is never stale, whatever table a write touched; any write simply empties the cache.
// Keys must include everything the body depends on besides the database (e.g. the caller's visible namespaces).
import type { Db } from '../store/db.js';

const MAX_ENTRIES = 256;

interface Cache {
  version: string;
  entries: Map<string, Buffer>;
}

const caches = new WeakMap<Db, Cache>();
const versionReaders = new WeakMap<Db, () => string>();

/**
 * Changes whenever anything is written to the database, by this connection (total_changes()) or by another one
 * (PRAGMA data_version). Two equal values mean no row changed in between.
 */
export function databaseVersion(db: Db): string {
  let read = versionReaders.get(db);
  if (!read) {
    const changes = db.prepare('SELECT total_changes() AS n').pluck();
    const dataVersion = db.prepare('PRAGMA data_version').pluck();
    read = () => `${String(changes.get())}:${String(dataVersion.get())}`;
    versionReaders.set(db, read);
  }
  return read();
}

function cacheFor(db: Db): Cache {
  let cache = caches.get(db);
  if (!cache) {
    cache = { version: databaseVersion(db), entries: new Map() };
    caches.set(db, cache);
  }
  return cache;
}

/**
 * The UTF-8 JSON of `build()`, built at most once per database version and key. Kept encoded so a hit is sent
 * as is: a list of 1,000 namespaces is ~120 KB, and re-encoding it on every response was most of its cost.
 */
export function cachedJson(db: Db, key: string, build: () => unknown): Buffer {
  const cache = cacheFor(db);
  const version = databaseVersion(db);
  if (version !== cache.version) {
    cache.entries.clear();
    cache.version = version;
  }
  const hit = cache.entries.get(key);
  if (hit !== undefined) return hit;
  const body = Buffer.from(JSON.stringify(build()), 'utf8');
  if (cache.entries.size >= MAX_ENTRIES) cache.entries.clear();
  cache.entries.set(key, body);
  return body;
}
