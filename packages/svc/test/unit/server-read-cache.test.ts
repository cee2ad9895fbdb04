// The read cache never serves a body older than the database: any write, by this or another connection, empties it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDatabase } from '../../src/store/db.js';
import { cachedJson } from '../../src/api/read-cache.js';

test('cached until this connection or another one writes', () => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-cache-'));
  const db = openDatabase(join(dir, 'x.db'));
  const other = openDatabase(join(dir, 'x.db'));
  try {
    db.exec('CREATE TABLE t (v INTEGER)');
    let builds = 0;
    const list = () => cachedJson(db, 'k', () => {
      builds++;
      return db.prepare('SELECT v FROM t ORDER BY v').pluck().all();
    }).toString('utf8');
    assert.equal(list(), '[]');
    assert.equal(list(), '[]');
    assert.equal(builds, 1);
    db.prepare('INSERT INTO t VALUES (1)').run();
    assert.equal(list(), '[1]');
    assert.equal(builds, 2);
    other.prepare('INSERT INTO t VALUES (2)').run();
    assert.equal(list(), '[1,2]');
    assert.equal(builds, 3);
    db.prepare('UPDATE t SET v = 5 WHERE v = 7').run(); // no row changed: still cached
    assert.equal(list(), '[1,2]');
    assert.equal(builds, 3);
    assert.equal(cachedJson(db, 'other-key', () => ({ a: 1 })).toString('utf8'), '{"a":1}');
    assert.equal(cachedJson(db, 'text', () => ['é']).length, Buffer.byteLength('["é"]'), 'sent as UTF-8 bytes');
    assert.equal(builds, 3);
  } finally {
    other.close();
    db.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
