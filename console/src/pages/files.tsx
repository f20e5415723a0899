/** Files: upload by drag and drop (or the file picker) with a progress bar, the list, delete. */
import { useEffect, useState } from 'preact/hooks';
import { authorization, callJson, describe } from '../api.ts';
import { ErrorLine, Page } from '../ui.tsx';

interface FileObject {
  id: string;
  filename: string;
  bytes: number;
  status: string;
  purpose: string;
  created_at: number;
}

/** fetch() reports no upload progress; XMLHttpRequest does. */
function upload(file: File, onProgress: (fraction: number) => void): Promise<FileObject> {
  return new Promise((resolve, reject) => {
    const request = new XMLHttpRequest();
    request.open('POST', '/v1/files');
    for (const [name, value] of Object.entries(authorization())) {
      request.setRequestHeader(name, value);
    }
    request.upload.onprogress = (event) => {
      if (event.lengthComputable) {
        onProgress(event.loaded / event.total);
      }
    };
    request.onload = () => {
      let body: { error?: { message?: string } } & Partial<FileObject> = {};
      try {
        body = JSON.parse(request.responseText);
      } catch {
        // reported below by status
      }
      if (request.status >= 200 && request.status < 300) {
        resolve(body as FileObject);
      } else {
        const id = request.getResponseHeader('x-svc-request-id');
        reject(
          new Error(`${body.error?.message ?? `upload failed (${request.status})`}${id ? ` (request ${id})` : ''}`),
        );
      }
    };
    request.onerror = () => reject(new Error('The upload failed (network).'));
    const form = new FormData();
    form.append('purpose', 'user_data');
    form.append('file', file, file.name);
    request.send(form);
  });
}

export function FilesPage() {
  const [files, setFiles] = useState<FileObject[]>([]);
  const [progress, setProgress] = useState<{ name: string; fraction: number } | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [dragging, setDragging] = useState(false);

  async function refresh() {
    try {
      setFiles((await callJson<{ data: FileObject[] }>('/v1/files?limit=100')).data);
    } catch (failure) {
      setError(describe(failure));
    }
  }
  useEffect(() => {
    refresh();
  }, []);

  async function send(list: FileList | null) {
    setError(null);
    for (const file of Array.from(list ?? [])) {
      setProgress({ name: file.name, fraction: 0 });
      try {
        await upload(file, (fraction) => setProgress({ name: file.name, fraction }));
      } catch (failure) {
        setError(describe(failure));
      }
    }
    setProgress(null);
    await refresh();
  }

  async function remove(file: FileObject) {
    try {
      await callJson(`/v1/files/${encodeURIComponent(file.id)}`, { method: 'DELETE' });
      await refresh();
    } catch (failure) {
      setError(describe(failure));
    }
  }

  return (
    <Page title="Files">
      <section
        class={`dropzone${dragging ? ' dragging' : ''}`}
        data-testid="dropzone"
        aria-label="Drop files to upload"
        onDragOver={(event) => {
          event.preventDefault();
          setDragging(true);
        }}
        onDragLeave={() => setDragging(false)}
        onDrop={(event) => {
          event.preventDefault();
          setDragging(false);
          send(event.dataTransfer?.files ?? null);
        }}
      >
        <p>Drop files here, or</p>
        <label class="button">
          choose files
          <input type="file" multiple class="visually-hidden" onChange={(event) => send(event.currentTarget.files)} />
        </label>
      </section>
      {progress ? (
        <div>
          <label for="upload-progress">Uploading {progress.name}</label>
          <progress id="upload-progress" max={1} value={progress.fraction} />
        </div>
      ) : null}
      <ErrorLine message={error} />
      <table class="table">
        <caption>Your files</caption>
        <thead>
          <tr>
            <th scope="col">Name</th>
            <th scope="col">Size</th>
            <th scope="col">Status</th>
            <th scope="col">Id</th>
            <th scope="col">
              <span class="visually-hidden">Actions</span>
            </th>
          </tr>
        </thead>
        <tbody data-testid="file-list">
          {files.map((file) => (
            <tr key={file.id}>
              <td>{file.filename}</td>
              <td>{file.bytes.toLocaleString()} B</td>
              <td>{file.status}</td>
              <td>
                <code>{file.id}</code>
              </td>
              <td>
                <button type="button" onClick={() => remove(file)} aria-label={`Delete ${file.filename}`}>
                  Delete
                </button>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </Page>
  );
}
