// Original file: svc/v1/auth.proto

export interface DeleteAppSessionRequest {
  session_id?: string;
}

export interface DeleteAppSessionRequest__Output {
  session_id: string;
}
