/**
 * A real S3-compatible server (s3rver) on loopback for a test: a random port, its objects in a temporary
 * directory removed at close, one bucket. `location(prefix)` is the blob location the server would get from
 * `OMNIGATE_BLOB_URL=s3://<bucket>/<prefix>` with `AWS_ENDPOINT_URL` pointing here; `keys()` lists what the
 * bucket holds, through the S3 API, so a test sees exactly what another instance would.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { DeleteObjectCommand, ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import S3rver from 's3rver';
import type { BlobLocation } from '../../server/config.js';

/** s3rver checks signatures against this fixed pair. */
const CREDENTIALS = { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' };

export interface TestS3Server {
  endpoint: string;
  bucket: string;
  location(prefix?: string): Extract<BlobLocation, { kind: 's3' }>;
  /** Every object key in the bucket (under `prefix` when given). */
  keys(prefix?: string): Promise<string[]>;
  /** Deletes one object, as a lifecycle rule or an operator might. */
  remove(key: string): Promise<void>;
  close(): Promise<void>;
}

export async function startS3Server(bucket = 'omnigate-test'): Promise<TestS3Server> {
  const directory = mkdtempSync(path.join(tmpdir(), 'omnigate-s3rver-'));
  const server = new S3rver({
    address: '127.0.0.1',
    port: 0,
    silent: true,
    directory,
    configureBuckets: [{ name: bucket, configs: [] }],
  });
  const { port } = await server.run();
  const endpoint = `http://127.0.0.1:${port}`;
  const location = (prefix = '') => ({
    kind: 's3' as const,
    bucket,
    prefix,
    endpoint,
    region: 'us-east-1',
    forcePathStyle: true,
    credentials: CREDENTIALS,
  });
  const client = new S3Client({ endpoint, region: 'us-east-1', forcePathStyle: true, credentials: CREDENTIALS });
  return {
    endpoint,
    bucket,
    location,
    async keys(prefix) {
      const listed = await client.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: prefix }));
      return (listed.Contents ?? []).map((object) => object.Key!).sort();
    },
    async remove(key) {
      await client.send(new DeleteObjectCommand({ Bucket: bucket, Key: key }));
    },
    async close() {
      client.destroy();
      await server.close();
      rmSync(directory, { recursive: true, force: true });
    },
  };
}
