// Where an `s3://bucket/prefix/` location's objects are, as the HTTP base URL the storage client
// reads under: virtual-host style `https://<bucket>.s3.<region>.amazonaws.com/<prefix>` (AWS's
// default) or path style `https://s3.<region>.amazonaws.com/<bucket>/<prefix>` (S3-compatible
// stores that have no per-bucket host names); `s3_endpoint` replaces the AWS host. Pure.

export type S3UrlStyle = 'virtual-host' | 'path';

export interface S3Url {
  bucket: string;
  /** Key prefix, '' or ending with '/'. */
  prefix: string;
}

/**
 * Bucket names as S3 allows them for new buckets (3–63 of a-z 0-9 . -, a letter or digit at
 * each end): anything else could not be a host-name label in virtual-host style.
 */
const BUCKET = /^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/;

/** The bucket and key prefix of `s3://bucket/prefix/`, or why it is not one. */
export function parseS3Url(v: string): S3Url | string {
  const m = /^s3:\/\/([^/?#]*)\/([^?#]*)$/.exec(v);
  if (m === null)
    return `expected s3://bucket/prefix/ (a bucket, then a prefix ending in "/"), found "${v.slice(0, 64)}"`;
  const bucket = m[1]!;
  const prefix = m[2]!;
  if (!BUCKET.test(bucket) || bucket.includes('..'))
    return `"${bucket.slice(0, 64)}" is not an S3 bucket name (3-63 of a-z, 0-9, ".", "-")`;
  if (prefix !== '' && !prefix.endsWith('/')) return `an S3 prefix names a directory: end it with "/" (${prefix})`;
  if (prefix.split('/').some((s, i, all) => (s === '' && i < all.length - 1) || s === '.' || s === '..'))
    return `the S3 prefix "${prefix.slice(0, 64)}" has an empty, "." or ".." segment`;
  return { bucket, prefix };
}

/** The default endpoint of a region. */
export function awsEndpoint(region: string): string {
  return `https://s3.${region}.amazonaws.com`;
}

/** The base URL (ending in '/') of an S3 location's objects. */
export function s3BaseUrl(s3: S3Url, endpoint: string, style: S3UrlStyle): URL {
  const e = new URL(endpoint);
  const keyPath = s3.prefix
    .split('/')
    .map((s) => encodeS3(s))
    .join('/');
  const base = e.pathname.endsWith('/') ? e.pathname : e.pathname + '/';
  if (style === 'path') return new URL(`${e.protocol}//${e.host}${base}${s3.bucket}/${keyPath}`);
  return new URL(`${e.protocol}//${s3.bucket}.${e.host}${base}${keyPath}`);
}

/**
 * A key segment as S3's canonical URI writes it: every byte but A-Z a-z 0-9 - . _ ~ escaped (the
 * SigV4 rule; encodeURIComponent leaves ! ' ( ) * as they are).
 */
export function encodeS3(segment: string): string {
  return encodeURIComponent(segment).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}
