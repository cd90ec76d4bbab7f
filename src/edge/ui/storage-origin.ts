import { isIP } from 'node:net';
import type { DeploymentConfig, S3Config } from '../../config/deployment.ts';

/**
 * The origin a browser reaches the bucket at through a presigned URL, as the AWS SDK builds
 * those URLs: virtual-hosted (`bucket.host`) unless the configuration asks for paths, the
 * bucket name has a dot, or the endpoint is an IP address; AWS's regional endpoint when no
 * endpoint is set. test/unit/storage-origin.test.ts holds it to what the SDK signs.
 */
export function bucketOrigin(s3: S3Config): string {
  const virtual = !s3.forcePathStyle && !s3.bucket.includes('.');
  if (s3.endpoint === null) {
    const domain = s3.region.startsWith('cn-') ? 'amazonaws.com.cn' : 'amazonaws.com';
    return `https://${virtual ? `${s3.bucket}.` : ''}s3.${s3.region}.${domain}`;
  }
  const url = new URL(s3.endpoint);
  if (!virtual || isIP(url.hostname.replace(/^\[|\]$/g, '')) !== 0) return url.origin;
  return `${url.protocol}//${s3.bucket}.${url.host}`;
}

/**
 * What the console's Content-Security-Policy must add for media on object storage: the
 * bucket's origin, which uploads go to straight (presigned PUTs: `connect-src`) and downloads
 * come from (presigned GETs: `img-src`, `media-src`, which allow any https origin already;
 * named here for a store reached over plain http on a private network). Nothing for a local
 * directory, where both go through Atelier itself.
 */
export function storageOrigins(mediaStore: DeploymentConfig['mediaStore']): {
  connect: string[];
  media: string[];
} {
  if (mediaStore.kind !== 's3') return { connect: [], media: [] };
  const origin = bucketOrigin(mediaStore.s3);
  return { connect: mediaStore.s3.directUploads ? [origin] : [], media: [origin] };
}
