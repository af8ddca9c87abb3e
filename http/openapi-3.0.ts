type JsonObject = Record<string, unknown>;

/**
 * The OpenAPI 3.1 document as OpenAPI 3.0.3 (the spec names 3.0): `const` → `enum`, `anyOf` with null and type
 * arrays → `nullable`, `patternProperties` → `additionalProperties`, and 3.1-only fields dropped.
 */
export function toOpenApi30(document: JsonObject): JsonObject {
  const converted = downgrade(structuredClone(document)) as JsonObject;
  converted.openapi = '3.0.3';
  const info = converted.info as JsonObject;
  delete (info.license as JsonObject).identifier;
  return converted;
}

/** Converts bottom-up: a node's children are 3.0 already when the node itself is looked at. */
function downgrade(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(downgrade);
  if (typeof value !== 'object' || value === null) return value;
  const node = value as JsonObject;
  for (const key of Object.keys(node)) node[key] = downgrade(node[key]);
  if (node.patternProperties && typeof node.patternProperties === 'object') {
    const [valueSchema] = Object.values(node.patternProperties as JsonObject);
    node.additionalProperties = valueSchema ?? true;
    delete node.patternProperties;
  }
  if ('const' in node) {
    node.enum = [node.const];
    delete node.const;
  }
  if (Array.isArray(node.anyOf)) {
    const branches = node.anyOf as JsonObject[];
    const nonNull = branches.filter((b) => b.type !== 'null');
    if (nonNull.length < branches.length) {
      delete node.anyOf;
      Object.assign(node, nullableOf(nonNull.flatMap(unionBranches)));
    }
  }
  if (Array.isArray(node.type)) {
    const types = (node.type as string[]).filter((t) => t !== 'null');
    if (types.length < (node.type as string[]).length) Object.assign(node, nullable(node));
    node.type = types.length === 1 ? types[0] : types;
  }
  return node;
}

/**
 * `branches` or null, in 3.0 terms. 3.0.3 lets `nullable` add null only to a schema with a `type`, and only as one of
 * its `enum` values when it lists them: `{anyOf, nullable: true}` (what a nullable literal union became) allowed no
 * null at all. So literals of one type become one enum with null among them, and each branch of any other union
 * takes null itself.
 */
function nullableOf(branches: JsonObject[]): JsonObject {
  const [first] = branches;
  if (branches.length === 1 && typeof first?.type === 'string') return nullable(first);
  if (first && branches.every((b) => isLiteral(b) && b.type === first.type)) {
    return nullable({ type: first.type, enum: branches.flatMap((b) => b.enum as unknown[]) });
  }
  const typed = branches.map((b) => (typeof b.type === 'string' ? { ...b, ...nullable(b) } : b));
  // A branch without a type cannot take nullable: a branch of its own then stands for null.
  const nullOnly = typed.some((b) => typeof b.type !== 'string') ? [{ type: 'string', enum: [null], nullable: true }] : [];
  return { anyOf: [...typed, ...nullOnly] };
}

/** `schema`'s nullable form: `nullable: true`, and null among its enum values when it lists them. */
function nullable(schema: JsonObject): JsonObject {
  return { ...schema, nullable: true, ...(Array.isArray(schema.enum) ? { enum: [...(schema.enum as unknown[]), null] } : {}) };
}

/** The branches of a nested, bare union (a nullable TypeBox union is `anyOf: [{anyOf}, null]`), else the branch. */
function unionBranches(branch: JsonObject): JsonObject[] {
  const keys = Object.keys(branch);
  return Array.isArray(branch.anyOf) && keys.length === 1 ? (branch.anyOf as JsonObject[]) : [branch];
}

/** A TypeBox literal as 3.0 has it: a type and the one value. */
function isLiteral(schema: JsonObject): boolean {
  return Array.isArray(schema.enum) && Object.keys(schema).every((key) => key === 'type' || key === 'enum');
}
