/**
 * The tools this build serves, REST and MCP alike. A tool is offered only when its capability is served: a
 * new capability (web search, stored files) adds its tools as one module each and one line here, and
 * `tools/list` shows them from then on. Order is the order of `tools/list`.
 */
import { chatTool } from './chat.js';
import { createVideoTool } from './create-video.js';
import { embedTool } from './embed.js';
import { generateImageTool } from './generate-image.js';
import { generateMusicTool } from './generate-music.js';
import { getVideoTool } from './get-video.js';
import { imageUnderstandingTool } from './image-understanding.js';
import { listFilesTool } from './list-files.js';
import { readFileTool } from './read-file.js';
import { searchAnswerTool } from './search-answer.js';
import { textToSpeechTool } from './text-to-speech.js';
import { transcribeAudioTool } from './transcribe-audio.js';
import type { Tool } from './tool-definition.js';
import { webSearchTool } from './web-search.js';

export const TOOLS: readonly Tool[] = [
  imageUnderstandingTool,
  generateImageTool,
  textToSpeechTool,
  transcribeAudioTool,
  generateMusicTool,
  createVideoTool,
  getVideoTool,
  chatTool,
  webSearchTool,
  searchAnswerTool,
  listFilesTool,
  readFileTool,
  embedTool,
] as unknown as readonly Tool[];
