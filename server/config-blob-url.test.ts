/** `OMNIGATE_BLOB_URL`, the S3 variables beside it, and `OMNIGATE_PEPPER_FILE`, as loadConfig reads them. */
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from './config.js';

function refusal(env: NodeJS.ProcessEnv): string {
  try {
    loadConfig(env);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as Error).message;
  }
  throw new Error('expected a ConfigError');
}

describe('OMNIGATE_BLOB_URL', () => {
  it('is the data directory when unset, a directory for file:///path', () => {
    expect(loadConfig({}).blobLocation).toBeUndefined();
    expect(loadConfig({ OMNIGATE_BLOB_URL: 'file:///mnt/shared/blobs' }).blobLocation).toEqual({
      kind: 'directory',
      directory: '/mnt/shared/blobs',
    });
  });

  it('names a bucket and prefix for s3://, on AWS by default, path-style on a custom endpoint', () => {
    expect(loadConfig({ OMNIGATE_BLOB_URL: 's3://my-bucket' }).blobLocation).toEqual({
      kind: 's3',
      bucket: 'my-bucket',
      prefix: '',
      endpoint: undefined,
      region: 'us-east-1',
      forcePathStyle: false,
    });
    expect(
      loadConfig({
        OMNIGATE_BLOB_URL: 's3://my-bucket/omnigate/blobs/',
        AWS_ENDPOINT_URL: 'http://127.0.0.1:9000',
        AWS_ENDPOINT_URL_S3: 'http://minio:9000',
        AWS_REGION: 'eu-west-3',
      }).blobLocation,
    ).toEqual({
      kind: 's3',
      bucket: 'my-bucket',
      prefix: 'omnigate/blobs',
      endpoint: 'http://minio:9000',
      region: 'eu-west-3',
      forcePathStyle: true,
    });
    expect(
      loadConfig({
        OMNIGATE_BLOB_URL: 's3://b-1/p',
        AWS_ENDPOINT_URL: 'https://s3.example.net',
        AWS_DEFAULT_REGION: 'auto',
      }).blobLocation,
    ).toMatchObject({ endpoint: 'https://s3.example.net', region: 'auto', forcePathStyle: true });
  });

  it.each([
    ['/plain/path', 'not a URL'],
    ['https://bucket.s3.amazonaws.com/x', 'unknown scheme https:'],
    ['s3://AKIA:secret@bucket/x', 'no user, password'],
    ['s3://bucket/x?region=eu', 'no user, password, query'],
    ['s3://Bad_Bucket/x', 'a bucket name is'],
    ['file://otherhost/x', 'a file URL names a local path'],
    ['s3://bucket/%E0%A4%A', 'a bad %-escape'],
  ])('refuses %s', (url, why) => {
    expect(refusal({ OMNIGATE_BLOB_URL: url })).toContain(why);
  });

  it('never repeats a secret given in the URL', () => {
    const message = refusal({ OMNIGATE_BLOB_URL: 's3://AKIA:hunter2@bucket/x' });
    expect(message).not.toContain('hunter2');
    expect(message).toContain("got 's3://…@bucket/x'");
  });

  it('refuses an endpoint that is not an http(s) URL', () => {
    expect(refusal({ OMNIGATE_BLOB_URL: 's3://bucket', AWS_ENDPOINT_URL: 'minio:9000' })).toContain(
      "AWS_ENDPOINT_URL_S3 / AWS_ENDPOINT_URL must be an http(s) URL, got 'minio:9000'",
    );
  });
});

describe('OMNIGATE_PEPPER_FILE', () => {
  it('is resolved to an absolute path; unset keeps the data directory pepper', () => {
    expect(loadConfig({}).pepperFile).toBeUndefined();
    expect(loadConfig({ OMNIGATE_PEPPER_FILE: 'secrets/pepper' }).pepperFile).toBe(path.resolve('secrets/pepper'));
  });
});
