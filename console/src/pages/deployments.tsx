/**
 * Admin: the circuit of every deployment of the models configured with `deployments`, as `GET /health/ready`
 * shows them (this instance's view: closed, half-open or open, and the failures counted). The readiness probe
 * needs no key and answers 503 while a dependency fails, with the same body, so both are read.
 */
import { useEffect, useState } from 'preact/hooks';
import { describe } from '../api.ts';
import { ErrorLine, Page } from '../ui.tsx';

interface Circuit {
  model: string;
  deployment: string;
  state: string;
  failures: number;
}

interface Readiness {
  status: string;
  checks: Array<{ name: string; status: string; detail: string | null }>;
  deployments?: Circuit[];
}

export function DeploymentsPage() {
  const [readiness, setReadiness] = useState<Readiness | null>(null);
  const [error, setError] = useState<string | null>(null);

  async function refresh() {
    try {
      const response = await fetch('/health/ready');
      setReadiness((await response.json()) as Readiness);
      setError(null);
    } catch (failure) {
      setError(describe(failure));
    }
  }

  useEffect(() => {
    void refresh();
    const timer = setInterval(() => void refresh(), 5_000);
    return () => clearInterval(timer);
  }, []);

  const circuits = readiness?.deployments ?? [];
  return (
    <Page title="Deployments">
      <ErrorLine message={error} />
      {readiness ? (
        <p role="status">
          This instance is <strong>{readiness.status === 'ready' ? 'ready' : 'not ready'}</strong>
          {readiness.checks.length > 0
            ? `: ${readiness.checks.map((check) => `${check.name} ${check.status}`).join(', ')}`
            : ''}
          .
        </p>
      ) : null}
      {readiness && circuits.length === 0 ? <p>No model is configured with deployments.</p> : null}
      {circuits.length > 0 ? (
        <table data-testid="circuits">
          <caption>Circuits as this instance last saw them (refreshed every 5 s)</caption>
          <thead>
            <tr>
              <th scope="col">Model</th>
              <th scope="col">Deployment</th>
              <th scope="col">Circuit</th>
              <th scope="col">Failures</th>
            </tr>
          </thead>
          <tbody>
            {circuits.map((circuit) => (
              <tr key={`${circuit.model} ${circuit.deployment}`}>
                <td>{circuit.model}</td>
                <td>
                  <code>{circuit.deployment}</code>
                </td>
                <td class={`circuit-${circuit.state}`}>{circuit.state}</td>
                <td>{circuit.failures}</td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
    </Page>
  );
}
