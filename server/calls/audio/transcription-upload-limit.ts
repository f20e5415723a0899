/** The audio upload limit of the transcription operations, checked while the form is read (413 past it). */
import { ApiError } from '../../core/api-error.js';
import type { StreamedLimit } from '../../http/upload-storage.js';
import { DEFAULT_TRANSCRIPTION_SETTINGS, type TranscriptionSettings } from './transcribe-audio.js';

export function transcriptionUploadLimits(
  settings: TranscriptionSettings = DEFAULT_TRANSCRIPTION_SETTINGS,
): Record<'createTranscription' | 'createTranslation', StreamedLimit> {
  const limit: StreamedLimit = {
    maxBytes: settings.maxBytes,
    tooLarge: () =>
      new ApiError(
        413,
        `The audio file exceeds the limit of ${settings.maxBytes} bytes (OMNIGATE_TRANSCRIPTION_MAX_BYTES).`,
        { code: 'file_too_large', param: 'file' },
      ),
  };
  return { createTranscription: limit, createTranslation: limit };
}
