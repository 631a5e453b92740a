// Original file: svc/v1/auth.proto

export interface Role {
  name?: string;
  spec_json?: string;
}

export interface Role__Output {
  name: string;
  spec_json: string;
}
