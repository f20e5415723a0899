/**
 * The few EXIF fields worth reporting about an image, read with exifr. exifr throws "Unknown file format" on
 * WebP and GIF and answers undefined when there is no EXIF block; both mean "no EXIF" here, never a failure
 * of the analysis. Only picked tags are parsed, so a large maker-note block costs nothing.
 */
import exifr from 'exifr';

export interface ExifFacts {
  make?: string;
  model?: string;
  software?: string;
  takenAt?: string;
  orientation?: number;
  latitude?: number;
  longitude?: number;
}

const PICK = [
  'Make',
  'Model',
  'Software',
  'DateTimeOriginal',
  'ModifyDate',
  'Orientation',
  'GPSLatitude',
  'GPSLongitude',
  'GPSLatitudeRef',
  'GPSLongitudeRef',
];

function text(value: unknown): string | undefined {
  return typeof value === 'string' && value.trim() ? value.trim().slice(0, 200) : undefined;
}

function isoDate(value: unknown): string | undefined {
  return value instanceof Date && !Number.isNaN(value.getTime()) ? value.toISOString() : text(value);
}

export async function readExif(bytes: Uint8Array): Promise<ExifFacts | undefined> {
  let tags: Record<string, unknown> | undefined;
  try {
    tags = (await exifr.parse(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength), {
      pick: PICK,
      gps: true,
      translateValues: false,
    })) as Record<string, unknown> | undefined;
  } catch {
    return undefined;
  }
  if (!tags) {
    return undefined;
  }
  const facts: ExifFacts = {
    make: text(tags.Make),
    model: text(tags.Model),
    software: text(tags.Software),
    takenAt: isoDate(tags.DateTimeOriginal ?? tags.ModifyDate),
    orientation: typeof tags.Orientation === 'number' ? tags.Orientation : undefined,
    latitude: typeof tags.latitude === 'number' ? tags.latitude : undefined,
    longitude: typeof tags.longitude === 'number' ? tags.longitude : undefined,
  };
  const present = Object.fromEntries(Object.entries(facts).filter(([, value]) => value !== undefined)) as ExifFacts;
  return Object.keys(present).length > 0 ? present : undefined;
}
