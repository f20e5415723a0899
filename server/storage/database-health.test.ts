import { mkdtempSync, unlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { openDatabase } from './database.js';
import { databaseProblem } from './database-health.js';

describe('databaseProblem', () => {
  it('is null for a working database, names a closed connection and a deleted file', () => {
    const file = path.join(mkdtempSync(path.join(tmpdir(), 'omnigate-health-')), 'omnigate.sqlite');
    const db = openDatabase(file);
    expect(databaseProblem(db, file)).toBeNull();
    unlinkSync(file);
    expect(databaseProblem(db, file)).toMatch(/is gone/);
    db.close();
    const memory = openDatabase(':memory:');
    expect(databaseProblem(memory, ':memory:')).toBeNull();
    memory.close();
    expect(databaseProblem(memory, ':memory:')).toMatch(/does not answer/);
  });
});
