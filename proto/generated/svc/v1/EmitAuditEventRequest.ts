// Original file: svc/v1/auth.proto

export interface EmitAuditEventRequest {
  event_type?: string;
  user_name?: string;
  success?: boolean;
  fields_json?: string;
  _success?: "success";
}

export interface EmitAuditEventRequest__Output {
  event_type: string;
  user_name: string;
  success?: boolean;
  fields_json: string;
  _success?: "success";
}
