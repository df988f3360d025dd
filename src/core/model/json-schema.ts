// The model layer owns it: a tool's parameters are part of the request the model reads, and
// model sits below tools in the layer order (tools re-export it).
/** JSON schema of a tool's arguments (the subset the argument checker understands). */
export interface JsonSchema {
  type?: 'object' | 'string' | 'number' | 'integer' | 'boolean' | 'array';
  description?: string;
  properties?: Record<string, JsonSchema>;
  required?: string[];
  items?: JsonSchema;
  enum?: (string | number)[];
  minimum?: number;
  /** Inclusive upper bound for numbers; checked like `minimum`. */
  maximum?: number;
  additionalProperties?: boolean;
}
