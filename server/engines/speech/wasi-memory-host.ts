/**
 * A minimal WASI preview1 host, in memory, for running one WASI "command" (Flite) per call: its arguments,
 * one preopened directory whose files live in a Map, stdout/stderr kept as a bounded tail.
 *
 * Why not `node:wasi`: it caches the module's memory when the instance starts and does not notice
 * `memory.grow`, so later WASI calls touch freed memory. With Flite that segfaults the whole process after a
 * few runs (nodejs/node#52402; reproduced here on Node 20.20 within 3–25 runs, with or without wasm tier-up),
 * and a segfault in a worker thread takes the server down with it. This host reads `memory.buffer` afresh on
 * every call, needs no temporary directory, and prints no ExperimentalWarning. It implements exactly the 13
 * imports Flite uses; anything else is absent, so instantiating a module that needs more fails loudly.
 */

const ERRNO = { success: 0, badf: 8, inval: 28, noent: 44, nosys: 52 } as const;
const FILETYPE = { characterDevice: 2, directory: 3, regularFile: 4 } as const;
const OFLAGS = { creat: 1, trunc: 8 } as const;
const OUTPUT_TAIL = 4_096;
const PREOPEN_FD = 3;

/** Thrown by `proc_exit` to unwind the module's stack back to `runWasiCommand`. */
class ProcessExit {
  constructor(readonly code: number) {}
}

interface OpenFile {
  path: string;
  position: number;
}

export interface WasiRun {
  exitCode: number;
  /** Files in the preopened directory after the run, by name. */
  files: Map<string, Uint8Array>;
  /** The tail of what the command wrote to stdout and stderr. */
  output: string;
}

/** Runs `_start` of a fresh instance of `module` with `args` (argv[0] included); `directory` is preopened. */
export function runWasiCommand(module: WebAssembly.Module, args: readonly string[], directory = '/out'): WasiRun {
  const encoder = new TextEncoder();
  const encodedArgs = args.map((arg) => encoder.encode(`${arg}\0`));
  const files = new Map<string, Uint8Array>();
  const sizes = new Map<string, number>();
  const open = new Map<number, OpenFile>();
  let nextFd = PREOPEN_FD + 1;
  let output = '';
  let memory: WebAssembly.Memory | undefined;

  const view = () => new DataView(memory!.buffer);
  const bytes = () => new Uint8Array(memory!.buffer);
  const decoder = new TextDecoder();

  const contentOf = (file: OpenFile) =>
    (files.get(file.path) ?? new Uint8Array(0)).subarray(0, sizes.get(file.path) ?? 0);
  const writeAt = (file: OpenFile, data: Uint8Array) => {
    let buffer = files.get(file.path) ?? new Uint8Array(0);
    const size = sizes.get(file.path) ?? 0;
    const end = file.position + data.length;
    if (end > buffer.length) {
      // Grow geometrically: Flite writes the WAV in many small pieces.
      const grown = new Uint8Array(Math.max(end, buffer.length * 2, 4_096));
      grown.set(buffer.subarray(0, size));
      buffer = grown;
      files.set(file.path, buffer);
    }
    buffer.set(data, file.position);
    file.position = end;
    sizes.set(file.path, Math.max(size, end));
  };
  const iovecs = (pointer: number, count: number) =>
    Array.from({ length: count }, (_, i) => ({
      pointer: view().getUint32(pointer + i * 8, true),
      length: view().getUint32(pointer + i * 8 + 4, true),
    }));

  const imports = {
    args_sizes_get(countPointer: number, sizePointer: number) {
      view().setUint32(countPointer, encodedArgs.length, true);
      view().setUint32(
        sizePointer,
        encodedArgs.reduce((sum, arg) => sum + arg.length, 0),
        true,
      );
      return ERRNO.success;
    },
    args_get(argvPointer: number, bufferPointer: number) {
      let offset = bufferPointer;
      encodedArgs.forEach((arg, i) => {
        view().setUint32(argvPointer + i * 4, offset, true);
        bytes().set(arg, offset);
        offset += arg.length;
      });
      return ERRNO.success;
    },
    clock_time_get(_clock: number, _precision: bigint, timePointer: number) {
      view().setBigUint64(timePointer, process.hrtime.bigint(), true);
      return ERRNO.success;
    },
    fd_prestat_get(fd: number, pointer: number) {
      if (fd !== PREOPEN_FD) {
        return ERRNO.badf;
      }
      view().setUint8(pointer, 0); // a directory
      view().setUint32(pointer + 4, encoder.encode(directory).length, true);
      return ERRNO.success;
    },
    fd_prestat_dir_name(fd: number, pointer: number, length: number) {
      if (fd !== PREOPEN_FD) {
        return ERRNO.badf;
      }
      bytes().set(encoder.encode(directory).subarray(0, length), pointer);
      return ERRNO.success;
    },
    fd_fdstat_get(fd: number, pointer: number) {
      const type =
        fd <= 2
          ? FILETYPE.characterDevice
          : fd === PREOPEN_FD
            ? FILETYPE.directory
            : open.has(fd)
              ? FILETYPE.regularFile
              : undefined;
      if (type === undefined) {
        return ERRNO.badf;
      }
      view().setUint8(pointer, type);
      view().setUint16(pointer + 2, 0, true);
      view().setBigUint64(pointer + 8, 0xffff_ffff_ffff_ffffn, true);
      view().setBigUint64(pointer + 16, 0xffff_ffff_ffff_ffffn, true);
      return ERRNO.success;
    },
    fd_fdstat_set_flags() {
      return ERRNO.success;
    },
    path_open(
      dirFd: number,
      _lookup: number,
      pathPointer: number,
      pathLength: number,
      openFlags: number,
      ..._rest: unknown[]
    ) {
      if (dirFd !== PREOPEN_FD) {
        return ERRNO.badf;
      }
      const path = decoder.decode(bytes().slice(pathPointer, pathPointer + pathLength));
      const fdPointer = _rest[_rest.length - 1] as number;
      if (!files.has(path)) {
        if (!(openFlags & OFLAGS.creat)) {
          return ERRNO.noent;
        }
        files.set(path, new Uint8Array(0));
      }
      if (openFlags & OFLAGS.trunc) {
        sizes.set(path, 0);
      }
      const fd = nextFd++;
      open.set(fd, { path, position: 0 });
      view().setUint32(fdPointer, fd, true);
      return ERRNO.success;
    },
    fd_write(fd: number, iovsPointer: number, iovsCount: number, writtenPointer: number) {
      let written = 0;
      for (const { pointer, length } of iovecs(iovsPointer, iovsCount)) {
        const data = bytes().slice(pointer, pointer + length);
        if (fd === 1 || fd === 2) {
          output = (output + decoder.decode(data)).slice(-OUTPUT_TAIL);
        } else {
          const file = open.get(fd);
          if (!file) {
            return ERRNO.badf;
          }
          writeAt(file, data);
        }
        written += length;
      }
      view().setUint32(writtenPointer, written, true);
      return ERRNO.success;
    },
    fd_read(fd: number, iovsPointer: number, iovsCount: number, readPointer: number) {
      const file = open.get(fd);
      if (fd !== 0 && !file) {
        return ERRNO.badf;
      }
      let read = 0;
      if (file) {
        const content = contentOf(file);
        for (const { pointer, length } of iovecs(iovsPointer, iovsCount)) {
          const chunk = content.subarray(file.position, file.position + length);
          bytes().set(chunk, pointer);
          file.position += chunk.length;
          read += chunk.length;
        }
      }
      view().setUint32(readPointer, read, true);
      return ERRNO.success;
    },
    fd_seek(fd: number, offset: bigint, whence: number, resultPointer: number) {
      const file = open.get(fd);
      if (!file) {
        return fd <= 2 ? ERRNO.inval : ERRNO.badf;
      }
      const base = whence === 0 ? 0 : whence === 1 ? file.position : (sizes.get(file.path) ?? 0);
      const position = base + Number(offset);
      if (position < 0) {
        return ERRNO.inval;
      }
      file.position = position;
      view().setBigUint64(resultPointer, BigInt(position), true);
      return ERRNO.success;
    },
    fd_close(fd: number) {
      return open.delete(fd) || fd <= PREOPEN_FD ? ERRNO.success : ERRNO.badf;
    },
    proc_exit(code: number): never {
      throw new ProcessExit(code);
    },
  };

  const instance = new WebAssembly.Instance(module, { wasi_snapshot_preview1: imports });
  memory = instance.exports.memory as WebAssembly.Memory;
  let exitCode = 0;
  try {
    (instance.exports._start as () => void)();
  } catch (error) {
    if (!(error instanceof ProcessExit)) {
      throw error;
    }
    exitCode = error.code;
  }
  const finished = new Map<string, Uint8Array>();
  for (const [path, buffer] of files) {
    finished.set(path, buffer.slice(0, sizes.get(path) ?? 0));
  }
  return { exitCode, files: finished, output };
}
