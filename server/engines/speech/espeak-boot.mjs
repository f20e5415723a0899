// The eSpeak child process starts here: it teaches the process TypeScript (the server runs from source with
// tsx), then loads the child's own module.
import { register } from 'tsx/esm/api';

register();
await import('./espeak-child.ts');
