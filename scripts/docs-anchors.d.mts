/** Types of docs-anchors.mjs, for the tests that import it. */
export function legacyAnchorScript(document: unknown): string;
export function addLegacyAnchors(htmlPath: string, specPath: string): void;
