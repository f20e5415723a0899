/**
 * `POST /v1/audio/transcriptions` and `POST /v1/audio/translations`: the form's file (held in memory by the
 * validator's form reader, up to the transcription size limit) and fields, through `calls/audio/`; the answer
 * in the shape `response_format` asks for.
 */
import type { Response } from 'express';
import { ApiError } from '../core/api-error.js';
import { scopeOf } from '../http/call-scope.js';
import type { OperationHandler } from '../http/operation-types.js';
import { uploadedFilename } from '../http/upload-filename.js';
import { encodeTranscript } from '../formats/openai-audio/transcription-answer.js';
import { decodeTranscriptionRequest } from '../formats/openai-audio/transcription-request.js';
import { sendStreamedTranscription } from '../calls/audio/stream-transcription.js';
import { prepareTranscription, recordTranscription, type TranscriptionDeps } from '../calls/audio/transcribe-audio.js';
import type { components } from '../../generated/api.js';

interface UploadedPart {
  fieldname: string;
  originalname?: string;
  buffer?: Buffer;
}

function audioOf(req: object): { data: Uint8Array; filename: string } {
  const part = ((req as { files?: UploadedPart[] }).files ?? []).find((file) => file.fieldname === 'file');
  if (!part?.buffer) {
    throw new ApiError(400, "The form has no 'file' part with the audio.", { code: 'missing_file', param: 'file' });
  }
  if (part.buffer.length === 0) {
    throw new ApiError(400, 'The audio file is empty.', { code: 'invalid_audio', param: 'file' });
  }
  return {
    data: new Uint8Array(part.buffer.buffer, part.buffer.byteOffset, part.buffer.byteLength),
    filename: uploadedFilename(part.originalname) || 'audio',
  };
}

async function transcription(
  deps: TranscriptionDeps,
  req: object,
  res: Response,
  body: components['schemas']['TranscriptionRequest'] | components['schemas']['TranslationRequest'],
  task: 'transcribe' | 'translate',
): Promise<void> {
  const request = decodeTranscriptionRequest(body, task);
  const scope = scopeOf(res);
  const prepared = await prepareTranscription(deps, scope, { model: body.model, task, audio: audioOf(req), request });
  if (request.stream) {
    await sendStreamedTranscription(res, prepared);
    return;
  }
  const { model, context } = prepared.call;
  const transcript =
    task === 'translate'
      ? await model.translate(prepared.options, context)
      : await model.transcribe(prepared.options, context);
  recordTranscription(prepared, transcript);
  const answer = encodeTranscript(transcript, request.format, task, prepared.seconds);
  if (answer.kind === 'json') {
    res.json(answer.body);
  } else {
    res.type('text/plain; charset=utf-8').send(answer.body);
  }
}

export function transcriptionHandlers(deps: TranscriptionDeps): {
  createTranscription: OperationHandler<'createTranscription'>;
  createTranslation: OperationHandler<'createTranslation'>;
} {
  return {
    createTranscription: (req, res) => transcription(deps, req, res, req.body, 'transcribe'),
    createTranslation: (req, res) => transcription(deps, req, res, req.body, 'translate'),
  };
}
