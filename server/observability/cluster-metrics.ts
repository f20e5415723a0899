/**
 * Metrics of `--workers N` as one server: a scrape reaches one worker (whichever takes the connection), which
 * asks the primary over the cluster's IPC channel; the primary gathers every worker's registry with prom-client's
 * AggregatorRegistry (counters and histograms summed, each default metric by its own rule) and answers the text.
 * So the numbers of a scrape do not depend on which worker answered it.
 */
import cluster from 'node:cluster';
import { AggregatorRegistry, type Registry } from 'prom-client';

const REQUEST = 'omnigate:metrics-request';
const ANSWER = 'omnigate:metrics-answer';

interface MetricsRequest {
  type: typeof REQUEST;
  id: number;
}
interface MetricsAnswer {
  type: typeof ANSWER;
  id: number;
  text?: string;
  error?: string;
}

/** In a worker: lets the primary read `register`, and answers scrapes with the whole cluster's metrics. */
export function clusterRender(register: Registry, timeoutMs = 10_000): () => Promise<string> {
  AggregatorRegistry.setRegistries([register]);
  new AggregatorRegistry(); // installs prom-client's worker-side listener for the primary's requests
  const pending = new Map<number, (answer: MetricsAnswer) => void>();
  let next = 0;
  process.on('message', (message: MetricsAnswer) => {
    if (message?.type === ANSWER) {
      pending.get(message.id)?.(message);
    }
  });
  return () =>
    new Promise<string>((resolve, reject) => {
      const id = next++;
      const timer = setTimeout(() => {
        pending.delete(id);
        reject(new Error(`the primary did not answer with the cluster's metrics within ${timeoutMs} ms`));
      }, timeoutMs);
      pending.set(id, (answer) => {
        clearTimeout(timer);
        pending.delete(id);
        if (answer.text === undefined) {
          reject(new Error(answer.error ?? 'the primary could not gather the metrics'));
        } else {
          resolve(answer.text);
        }
      });
      process.send?.({ type: REQUEST, id } satisfies MetricsRequest);
    });
}

/** In the primary: answers each worker's request with every worker's metrics, aggregated. */
export function serveClusterMetrics(): void {
  const aggregator = new AggregatorRegistry();
  cluster.on('message', (worker, message: MetricsRequest) => {
    if (message?.type !== REQUEST) {
      return;
    }
    const reply = (answer: Omit<MetricsAnswer, 'type' | 'id'>) => {
      if (worker.isConnected()) {
        worker.send({ type: ANSWER, id: message.id, ...answer } satisfies MetricsAnswer);
      }
    };
    aggregator.clusterMetrics().then(
      (text) => reply({ text }),
      (error: Error) => reply({ error: error.message }),
    );
  });
}
