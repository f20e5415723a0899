/**
 * Bytes as objects in an S3-compatible bucket (`OMNIGATE_BLOB_URL=s3://bucket/prefix`), for instances on
 * different machines. Uploads are streamed (`@aws-sdk/lib-storage`'s Upload: a single PUT below one part, a
 * multipart upload above, at most `queueSize` parts in memory, aborted when the source fails) and reads are
 * GETs with a `Range` header, so neither an upload nor a download is ever held whole.
 *
 * The endpoint and region come from configuration (`AWS_ENDPOINT_URL_S3` / `AWS_ENDPOINT_URL`, `AWS_REGION`);
 * credentials, when not given, come from the SDK's default chain (`AWS_ACCESS_KEY_ID` and
 * `AWS_SECRET_ACCESS_KEY`, or a profile, or the instance's role), so a secret never passes through our config.
 * A custom endpoint (MinIO, Ceph, R2, a test server) is addressed path-style, and with checksums only where
 * the operation requires them: several S3-compatible servers refuse the SDK's default streaming checksums.
 */
import { createReadStream } from 'node:fs';
import { rm } from 'node:fs/promises';
import { type Readable, Transform } from 'node:stream';
import { DeleteObjectCommand, GetObjectCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import { ApiError } from '../../core/api-error.js';
import { assertKey, type ByteRange, type ByteStore } from './byte-store.js';

export interface S3Location {
  bucket: string;
  /** Key prefix without leading or trailing slash; '' for the bucket's root. */
  prefix: string;
  /** A custom endpoint (`http://127.0.0.1:9000`); AWS's own when absent. */
  endpoint?: string;
  region: string;
  /** Bucket in the path rather than the host name; on for custom endpoints. */
  forcePathStyle: boolean;
  /** Explicit credentials (tests); the SDK's default chain when absent. */
  credentials?: { accessKeyId: string; secretAccessKey: string };
}

/** Parts of 8 MiB, two in flight: an upload holds at most ~16 MiB of memory, whatever its size. */
const PART_BYTES = 8 * 1024 * 1024;
const PARTS_IN_FLIGHT = 2;

export function s3LocationText(location: Pick<S3Location, 'bucket' | 'prefix'>): string {
  return `s3://${location.bucket}${location.prefix ? `/${location.prefix}` : ''}`;
}

/**
 * The asked range and not a byte more, whatever the server sent: the HTTP answer has already promised its
 * Content-Length. Some S3-compatible servers answer `bytes=0-0` with the whole object (s3rver reads an end
 * of 0 as none); one that starts elsewhere than asked is an error rather than wrong bytes.
 */
function exactRange(body: Readable, range: ByteRange, contentRange: string | undefined): Readable {
  const sent = /^bytes (\d+)-(\d+)\//.exec(contentRange ?? '');
  if (!sent) {
    body.destroy();
    throw new Error(`the object store answered a range request without a Content-Range (${contentRange})`);
  }
  if (Number(sent[1]) !== range.start) {
    body.destroy();
    throw new Error(`the object store answered bytes ${sent[1]}-${sent[2]} for ${range.start}-${range.end}`);
  }
  if (Number(sent[2]) <= range.end) {
    return body;
  }
  let left = range.end - range.start + 1;
  const limited = new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      const part = chunk.subarray(0, left);
      left -= part.length;
      callback(null, part.length > 0 ? part : undefined);
      if (left === 0) {
        this.push(null);
        body.destroy();
      }
    },
  });
  body.on('error', (error) => limited.destroy(error));
  return body.pipe(limited);
}

/**
 * What a caller is told when the bucket fails (unreachable, refused credentials, a 5xx): a retryable 503 in
 * the documented envelope rather than a 500, naming the store and the SDK's error name, never its details
 * (they may quote a request). The SDK has already retried (3 attempts) by then.
 */
function unavailable(where: string, error: unknown): ApiError {
  const name = (error as { name?: string }).name ?? 'Error';
  return new ApiError(503, `The blob storage ${where} did not answer (${name}); try again later.`, {
    code: 'storage_unavailable',
    cause: error,
  });
}

function isMissing(error: unknown): boolean {
  const failure = error as { name?: string; $metadata?: { httpStatusCode?: number } };
  return failure.name === 'NoSuchKey' || failure.name === 'NotFound' || failure.$metadata?.httpStatusCode === 404;
}

export function createS3ByteStore(location: S3Location): ByteStore {
  const custom = location.endpoint !== undefined;
  const client = new S3Client({
    region: location.region,
    endpoint: location.endpoint,
    forcePathStyle: location.forcePathStyle,
    credentials: location.credentials,
    requestChecksumCalculation: custom ? 'WHEN_REQUIRED' : 'WHEN_SUPPORTED',
    responseChecksumValidation: custom ? 'WHEN_REQUIRED' : 'WHEN_SUPPORTED',
    // A dead endpoint fails a request in seconds, not at the OS's TCP timeout. No socket idle timeout: a
    // download paused by a slow client (backpressure) is idle on purpose.
    requestHandler: { connectionTimeout: 10_000 },
  });
  const where = s3LocationText(location);
  const objectKey = (key: string) => {
    assertKey(key);
    return location.prefix ? `${location.prefix}/${key}` : key;
  };

  async function put(key: string, source: Readable | Uint8Array): Promise<void> {
    const Key = objectKey(key);
    if (source instanceof Uint8Array) {
      try {
        await client.send(new PutObjectCommand({ Bucket: location.bucket, Key, Body: source }));
      } catch (error) {
        throw unavailable(where, error);
      }
      return;
    }
    // The Upload reads the source through an async iterator, which hides the source's own error behind the
    // iterator's; it is kept here to be rethrown as what went wrong.
    let sourceError: unknown;
    const onError = (error: unknown) => {
      sourceError ??= error;
    };
    source.on('error', onError);
    const upload = new Upload({
      client,
      params: { Bucket: location.bucket, Key, Body: source },
      partSize: PART_BYTES,
      queueSize: PARTS_IN_FLIGHT,
      leavePartsOnError: false,
    });
    try {
      await upload.done();
    } catch (error) {
      if (!source.destroyed) {
        source.destroy();
      }
      throw sourceError ?? unavailable(where, error);
    } finally {
      source.off('error', onError);
    }
    if (sourceError) {
      // The source failed after its last part was taken: the object must not stand for bytes that never came.
      await client.send(new DeleteObjectCommand({ Bucket: location.bucket, Key })).catch(() => {});
      throw sourceError;
    }
  }

  return {
    location: where,
    put,
    async putFile(key, file) {
      await put(key, createReadStream(file));
      await rm(file, { force: true });
    },
    async open(key, range) {
      const Key = objectKey(key);
      try {
        const answer = await client.send(
          new GetObjectCommand({
            Bucket: location.bucket,
            Key,
            Range: range ? `bytes=${range.start}-${range.end}` : undefined,
          }),
        );
        // In Node the body is the HTTP response itself: a Readable, read as it is piped.
        const body = answer.Body as Readable;
        return range ? exactRange(body, range, answer.ContentRange) : body;
      } catch (error) {
        if (isMissing(error)) {
          return undefined;
        }
        throw unavailable(where, error);
      }
    },
    async delete(key) {
      const Key = objectKey(key);
      try {
        await client.send(new DeleteObjectCommand({ Bucket: location.bucket, Key }));
      } catch (error) {
        throw unavailable(where, error);
      }
    },
    close() {
      client.destroy();
    },
  };
}
