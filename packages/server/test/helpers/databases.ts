// The databases every storage-touching suite runs on: a fresh SQLite file, and a fresh PostgreSQL
// database on the server of TEST_DATABASE_URL (skipped, with the reason, when it is not set).
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';

export interface TestDatabase {
  url: string;
  drop(): Promise<void>;
}

export interface DialectCase {
  name: 'sqlite' | 'postgres';
  /** A reason to skip, or false. */
  skip: string | false;
  create(): Promise<TestDatabase>;
}

export const sqliteCase: DialectCase = {
  name: 'sqlite',
  skip: false,
  async create() {
    const dir = mkdtempSync(join(tmpdir(), 'gc-test-'));
    return {
      url: `sqlite:${join(dir, 'test.db')}`,
      drop: async () => rmSync(dir, { recursive: true, force: true }),
    };
  },
};

export const postgresCase: DialectCase = {
  name: 'postgres',
  skip: process.env.TEST_DATABASE_URL ? false : 'TEST_DATABASE_URL is not set (PostgreSQL variant skipped)',
  async create() {
    const adminUrl = process.env.TEST_DATABASE_URL as string;
    const name = `gc_test_${randomBytes(6).toString('hex')}`;
    const admin = new pg.Client({ connectionString: adminUrl });
    await admin.connect();
    await admin.query(`create database ${name}`);
    await admin.end();
    const url = new URL(adminUrl);
    url.pathname = `/${name}`;
    return {
      url: url.toString(),
      async drop() {
        const client = new pg.Client({ connectionString: adminUrl });
        await client.connect();
        await client.query(`drop database if exists ${name} with (force)`);
        await client.end();
      },
    };
  },
};

export const DIALECTS: DialectCase[] = [sqliteCase, postgresCase];
