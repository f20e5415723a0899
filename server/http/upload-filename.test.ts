import { describe, expect, it } from 'vitest';
import { filenameRefusal, uploadedFilename } from './upload-filename.js';

describe('uploadedFilename', () => {
  it.each([
    ['report.pdf', 'report.pdf'],
    ['C:\\tmp\\a.pdf', 'a.pdf'],
    ['../../a.pdf', 'a.pdf'],
    ['invoice\u202Efdp.exe', 'invoicefdp.exe'],
    ['\u2067name\u2069.txt', 'name.txt'],
    ['tab\there.txt', 'tabhere.txt'],
    ['\u{1F469}\u200D\u{1F4BB}.png', '\u{1F469}\u200D\u{1F4BB}.png'],
    [undefined, 'file'],
    ['x'.repeat(300), 'x'.repeat(255)],
  ])('%j → %j', (original, kept) => {
    expect(uploadedFilename(original)).toBe(kept);
  });
});

describe('filenameRefusal', () => {
  it.each(['.', '..', '/', 'dir/..', 'a\\.', '\u202E', ' . '])('refuses %j with a 400 naming the filename', (name) => {
    const refusal = filenameRefusal(name);
    expect(refusal).toMatchObject({ status: 400, code: 'invalid_filename', param: 'file' });
    expect(refusal!.message).toMatch(/filename .* names no file/);
  });

  it.each([undefined, '', 'a.txt', '.env', '..a'])('lets %j through', (name) => {
    expect(filenameRefusal(name)).toBeUndefined();
  });
});
