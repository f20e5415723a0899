// `npm run contract:diff`: the contract against its 1.0.0 snapshot (openapi/redocly.diff.yaml's rules), failing on
// any major change except the deliberate ones listed with their values in openapi/allowed-breaking-changes.yaml
// (request array bounds, and response bodies changed on purpose).
// Redocly's diff config can only set a rule's impact for every change at once; lowering `schema-constraint-changed`
// would hide the next narrowing nobody meant, so each allowed change is named here instead.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import YAML from 'yaml';

const root = path.join(path.dirname(fileURLToPath(import.meta.url)), '..');
const redocly = path.join(root, 'node_modules', '.bin', 'redocly');
// An optional argument names another revision to check (the gate's own test passes altered copies).
const revision = process.argv[2] ?? 'openapi/api.yaml';
const args = ['diff', 'openapi/snapshots/api-1.0.0.yaml', revision, '--config', 'openapi/redocly.diff.yaml'];

const report = JSON.parse(
  execFileSync(redocly, [...args, '--fail-on', 'none', '--format', 'json'], {
    cwd: root,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'ignore'],
  }),
);
const listed = YAML.parse(fs.readFileSync(path.join(root, 'openapi', 'allowed-breaking-changes.yaml'), 'utf8'));
const allowed = listed.maxItems ?? {};
const decode = (pointer) => pointer.replace(/~1/g, '/').replace(/~0/g, '~');

function isAllowedBound(change) {
  const pointer = change.revision?.pointer ?? '';
  return (
    change.property === 'maxItems' &&
    change.verdicts.every((verdict) => verdict.ruleId === 'schema-constraint-changed') &&
    pointer.endsWith('/maxItems') &&
    allowed[pointer.slice(0, -'/maxItems'.length)] === change.revision.value
  );
}

/** A listed response body change: at one of its responses, under the body's schema, by its rule, with its value. */
function isAllowedResponseChange(change) {
  const changedPath = decode(change.path);
  return (listed.responses ?? []).some((entry) =>
    entry.at.some((at) => {
      const [route, method, status] = at.split(' ');
      const body = `#/paths/${route}/${method}/responses/${status}/content/application/json/schema/properties/`;
      return (
        changedPath.startsWith(body) &&
        entry.changes.some(
          (allowedChange) =>
            changedPath.slice(body.length) === allowedChange.property &&
            change.verdicts.length > 0 &&
            change.verdicts.every((verdict) => verdict.ruleId === allowedChange.rule) &&
            (allowedChange.value === undefined ||
              JSON.stringify(change.revision?.value) === JSON.stringify(allowedChange.value)),
        )
      );
    }),
  );
}

/**
 * Listed enum values added to a component schema, wherever redocly shows that schema first. Entries naming the
 * same schema add up (each change lists its own values with its own reason), and the values added must be exactly
 * their union.
 */
function isAllowedEnumAddition(change) {
  const pointer = change.revision?.pointer ?? '';
  const entries = (listed.enumValuesAdded ?? []).filter((candidate) => pointer === `${candidate.schema}/enum`);
  const [before, after] = [change.base?.value, change.revision?.value];
  if (entries.length === 0 || !Array.isArray(before) || !Array.isArray(after)) return false;
  const added = after.filter((value) => !before.includes(value)).sort();
  const allowedValues = [...new Set(entries.flatMap((entry) => entry.added))].sort();
  return (
    change.verdicts.length > 0 &&
    change.verdicts.every((verdict) => verdict.ruleId === 'enum-values-added') &&
    JSON.stringify(added) === JSON.stringify(allowedValues)
  );
}

const isAllowed = (change) =>
  isAllowedBound(change) || isAllowedResponseChange(change) || isAllowedEnumAddition(change);

// One line per change (one redocly run: each costs ~1.5 s of CPU).
for (const change of report.changes) {
  const verdicts = change.verdicts.map((verdict) => `${verdict.message} (${verdict.ruleId})`).join('; ');
  console.log(
    `${change.impact.padEnd(5)} ${change.kind.padEnd(8)} ${decode(change.path)}${change.property ? ` · ${change.property}` : ''}${verdicts ? `: ${verdicts}` : ''}`,
  );
}
const count = (impact) => report.changes.filter((change) => change.impact === impact).length;
console.log(`${count('major')} major, ${count('minor')} minor, ${count('patch')} patch.`);
const majors = report.changes.filter((change) => change.impact === 'major');
const refused = majors.filter((change) => !isAllowed(change));
for (const change of refused) {
  console.error(`✖ not allowed: ${decode(change.path)} · ${change.property}`);
}
if (refused.length > 0) {
  console.error(`${refused.length} breaking change(s) not listed in openapi/allowed-breaking-changes.yaml.`);
  process.exit(1);
}
console.log(`${majors.length} major change(s), each listed in openapi/allowed-breaking-changes.yaml with its value.`);
