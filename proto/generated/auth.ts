import type * as grpc from "@grpc/grpc-js";
import type { MessageTypeDefinition } from "@grpc/proto-loader";

import type {
  AgentIdentityCredentials as _svc_v1_AgentIdentityCredentials,
  AgentIdentityCredentials__Output as _svc_v1_AgentIdentityCredentials__Output,
} from "./svc/v1/AgentIdentityCredentials.ts";
import type {
  AgentIdentityInfo as _svc_v1_AgentIdentityInfo,
  AgentIdentityInfo__Output as _svc_v1_AgentIdentityInfo__Output,
} from "./svc/v1/AgentIdentityInfo.ts";
import type { App as _svc_v1_App, App__Output as _svc_v1_App__Output } from "./svc/v1/App.ts";
import type {
  AppHeaderValue as _svc_v1_AppHeaderValue,
  AppHeaderValue__Output as _svc_v1_AppHeaderValue__Output,
} from "./svc/v1/AppHeaderValue.ts";
import type {
  AppSessionGrant as _svc_v1_AppSessionGrant,
  AppSessionGrant__Output as _svc_v1_AppSessionGrant__Output,
} from "./svc/v1/AppSessionGrant.ts";
import type {
  AuditEvent as _svc_v1_AuditEvent,
  AuditEvent__Output as _svc_v1_AuditEvent__Output,
} from "./svc/v1/AuditEvent.ts";
import type {
  AuthServiceClient as _svc_v1_AuthServiceClient,
  AuthServiceDefinition as _svc_v1_AuthServiceDefinition,
} from "./svc/v1/AuthService.ts";
import type {
  AuthenticateLocalRequest as _svc_v1_AuthenticateLocalRequest,
  AuthenticateLocalRequest__Output as _svc_v1_AuthenticateLocalRequest__Output,
} from "./svc/v1/AuthenticateLocalRequest.ts";
import type {
  AuthenticateLocalResponse as _svc_v1_AuthenticateLocalResponse,
  AuthenticateLocalResponse__Output as _svc_v1_AuthenticateLocalResponse__Output,
} from "./svc/v1/AuthenticateLocalResponse.ts";
import type {
  AuthenticateSPIFFERequest as _svc_v1_AuthenticateSPIFFERequest,
  AuthenticateSPIFFERequest__Output as _svc_v1_AuthenticateSPIFFERequest__Output,
} from "./svc/v1/AuthenticateSPIFFERequest.ts";
import type {
  AuthenticateSPIFFEResponse as _svc_v1_AuthenticateSPIFFEResponse,
  AuthenticateSPIFFEResponse__Output as _svc_v1_AuthenticateSPIFFEResponse__Output,
} from "./svc/v1/AuthenticateSPIFFEResponse.ts";
import type {
  AuthorizeNodeLoginRequest as _svc_v1_AuthorizeNodeLoginRequest,
  AuthorizeNodeLoginRequest__Output as _svc_v1_AuthorizeNodeLoginRequest__Output,
} from "./svc/v1/AuthorizeNodeLoginRequest.ts";
import type {
  AuthorizeSshLoginRequest as _svc_v1_AuthorizeSshLoginRequest,
  AuthorizeSshLoginRequest__Output as _svc_v1_AuthorizeSshLoginRequest__Output,
} from "./svc/v1/AuthorizeSshLoginRequest.ts";
import type {
  AuthorizeSshLoginResponse as _svc_v1_AuthorizeSshLoginResponse,
  AuthorizeSshLoginResponse__Output as _svc_v1_AuthorizeSshLoginResponse__Output,
} from "./svc/v1/AuthorizeSshLoginResponse.ts";
import type {
  BeginWebAuthnLoginRequest as _svc_v1_BeginWebAuthnLoginRequest,
  BeginWebAuthnLoginRequest__Output as _svc_v1_BeginWebAuthnLoginRequest__Output,
} from "./svc/v1/BeginWebAuthnLoginRequest.ts";
import type {
  BeginWebAuthnRegistrationRequest as _svc_v1_BeginWebAuthnRegistrationRequest,
  BeginWebAuthnRegistrationRequest__Output as _svc_v1_BeginWebAuthnRegistrationRequest__Output,
} from "./svc/v1/BeginWebAuthnRegistrationRequest.ts";
import type {
  BindSSOAuthRequestRequest as _svc_v1_BindSSOAuthRequestRequest,
  BindSSOAuthRequestRequest__Output as _svc_v1_BindSSOAuthRequestRequest__Output,
} from "./svc/v1/BindSSOAuthRequestRequest.ts";
import type {
  BootstrapAgentIdentityRequest as _svc_v1_BootstrapAgentIdentityRequest,
  BootstrapAgentIdentityRequest__Output as _svc_v1_BootstrapAgentIdentityRequest__Output,
} from "./svc/v1/BootstrapAgentIdentityRequest.ts";
import type { CaKey as _svc_v1_CaKey, CaKey__Output as _svc_v1_CaKey__Output } from "./svc/v1/CaKey.ts";
import type {
  CertAuthorityStatus as _svc_v1_CertAuthorityStatus,
  CertAuthorityStatus__Output as _svc_v1_CertAuthorityStatus__Output,
} from "./svc/v1/CertAuthorityStatus.ts";
import type {
  CheckNodeRegisteredRequest as _svc_v1_CheckNodeRegisteredRequest,
  CheckNodeRegisteredRequest__Output as _svc_v1_CheckNodeRegisteredRequest__Output,
} from "./svc/v1/CheckNodeRegisteredRequest.ts";
import type {
  CheckNodeRegisteredResponse as _svc_v1_CheckNodeRegisteredResponse,
  CheckNodeRegisteredResponse__Output as _svc_v1_CheckNodeRegisteredResponse__Output,
} from "./svc/v1/CheckNodeRegisteredResponse.ts";
import type {
  ClusterInfo as _svc_v1_ClusterInfo,
  ClusterInfo__Output as _svc_v1_ClusterInfo__Output,
} from "./svc/v1/ClusterInfo.ts";
import type {
  CreateAgentIdentityRequest as _svc_v1_CreateAgentIdentityRequest,
  CreateAgentIdentityRequest__Output as _svc_v1_CreateAgentIdentityRequest__Output,
} from "./svc/v1/CreateAgentIdentityRequest.ts";
import type {
  CreateAgentIdentityResponse as _svc_v1_CreateAgentIdentityResponse,
  CreateAgentIdentityResponse__Output as _svc_v1_CreateAgentIdentityResponse__Output,
} from "./svc/v1/CreateAgentIdentityResponse.ts";
import type {
  CreateAppSessionRequest as _svc_v1_CreateAppSessionRequest,
  CreateAppSessionRequest__Output as _svc_v1_CreateAppSessionRequest__Output,
} from "./svc/v1/CreateAppSessionRequest.ts";
import type {
  CreateAppSessionResponse as _svc_v1_CreateAppSessionResponse,
  CreateAppSessionResponse__Output as _svc_v1_CreateAppSessionResponse__Output,
} from "./svc/v1/CreateAppSessionResponse.ts";
import type {
  CreateJoinTokenRequest as _svc_v1_CreateJoinTokenRequest,
  CreateJoinTokenRequest__Output as _svc_v1_CreateJoinTokenRequest__Output,
} from "./svc/v1/CreateJoinTokenRequest.ts";
import type {
  CreateJoinTokenResponse as _svc_v1_CreateJoinTokenResponse,
  CreateJoinTokenResponse__Output as _svc_v1_CreateJoinTokenResponse__Output,
} from "./svc/v1/CreateJoinTokenResponse.ts";
import type {
  CreateLockRequest as _svc_v1_CreateLockRequest,
  CreateLockRequest__Output as _svc_v1_CreateLockRequest__Output,
} from "./svc/v1/CreateLockRequest.ts";
import type {
  CreatePasswordResetRequest as _svc_v1_CreatePasswordResetRequest,
  CreatePasswordResetRequest__Output as _svc_v1_CreatePasswordResetRequest__Output,
} from "./svc/v1/CreatePasswordResetRequest.ts";
import type {
  CreateSSOAuthRequestRequest as _svc_v1_CreateSSOAuthRequestRequest,
  CreateSSOAuthRequestRequest__Output as _svc_v1_CreateSSOAuthRequestRequest__Output,
} from "./svc/v1/CreateSSOAuthRequestRequest.ts";
import type {
  CreateUserRequest as _svc_v1_CreateUserRequest,
  CreateUserRequest__Output as _svc_v1_CreateUserRequest__Output,
} from "./svc/v1/CreateUserRequest.ts";
import type {
  CreateUserResponse as _svc_v1_CreateUserResponse,
  CreateUserResponse__Output as _svc_v1_CreateUserResponse__Output,
} from "./svc/v1/CreateUserResponse.ts";
import type {
  DeleteAgentIdentityRequest as _svc_v1_DeleteAgentIdentityRequest,
  DeleteAgentIdentityRequest__Output as _svc_v1_DeleteAgentIdentityRequest__Output,
} from "./svc/v1/DeleteAgentIdentityRequest.ts";
import type {
  DeleteAgentIdentityResponse as _svc_v1_DeleteAgentIdentityResponse,
  DeleteAgentIdentityResponse__Output as _svc_v1_DeleteAgentIdentityResponse__Output,
} from "./svc/v1/DeleteAgentIdentityResponse.ts";
import type {
  DeleteAppSessionRequest as _svc_v1_DeleteAppSessionRequest,
  DeleteAppSessionRequest__Output as _svc_v1_DeleteAppSessionRequest__Output,
} from "./svc/v1/DeleteAppSessionRequest.ts";
import type {
  DeleteAppSessionResponse as _svc_v1_DeleteAppSessionResponse,
  DeleteAppSessionResponse__Output as _svc_v1_DeleteAppSessionResponse__Output,
} from "./svc/v1/DeleteAppSessionResponse.ts";
import type {
  DeleteJoinTokenRequest as _svc_v1_DeleteJoinTokenRequest,
  DeleteJoinTokenRequest__Output as _svc_v1_DeleteJoinTokenRequest__Output,
} from "./svc/v1/DeleteJoinTokenRequest.ts";
import type {
  DeleteJoinTokenResponse as _svc_v1_DeleteJoinTokenResponse,
  DeleteJoinTokenResponse__Output as _svc_v1_DeleteJoinTokenResponse__Output,
} from "./svc/v1/DeleteJoinTokenResponse.ts";
import type {
  DeleteLockRequest as _svc_v1_DeleteLockRequest,
  DeleteLockRequest__Output as _svc_v1_DeleteLockRequest__Output,
} from "./svc/v1/DeleteLockRequest.ts";
import type {
  DeleteLockResponse as _svc_v1_DeleteLockResponse,
  DeleteLockResponse__Output as _svc_v1_DeleteLockResponse__Output,
} from "./svc/v1/DeleteLockResponse.ts";
import type {
  DeleteNodeRequest as _svc_v1_DeleteNodeRequest,
  DeleteNodeRequest__Output as _svc_v1_DeleteNodeRequest__Output,
} from "./svc/v1/DeleteNodeRequest.ts";
import type {
  DeleteNodeResponse as _svc_v1_DeleteNodeResponse,
  DeleteNodeResponse__Output as _svc_v1_DeleteNodeResponse__Output,
} from "./svc/v1/DeleteNodeResponse.ts";
import type {
  DeleteSessionRequest as _svc_v1_DeleteSessionRequest,
  DeleteSessionRequest__Output as _svc_v1_DeleteSessionRequest__Output,
} from "./svc/v1/DeleteSessionRequest.ts";
import type {
  DeleteSessionResponse as _svc_v1_DeleteSessionResponse,
  DeleteSessionResponse__Output as _svc_v1_DeleteSessionResponse__Output,
} from "./svc/v1/DeleteSessionResponse.ts";
import type {
  DeleteUserRequest as _svc_v1_DeleteUserRequest,
  DeleteUserRequest__Output as _svc_v1_DeleteUserRequest__Output,
} from "./svc/v1/DeleteUserRequest.ts";
import type {
  DeleteUserResponse as _svc_v1_DeleteUserResponse,
  DeleteUserResponse__Output as _svc_v1_DeleteUserResponse__Output,
} from "./svc/v1/DeleteUserResponse.ts";
import type {
  DeleteWebAuthnDeviceRequest as _svc_v1_DeleteWebAuthnDeviceRequest,
  DeleteWebAuthnDeviceRequest__Output as _svc_v1_DeleteWebAuthnDeviceRequest__Output,
} from "./svc/v1/DeleteWebAuthnDeviceRequest.ts";
import type {
  DeleteWebAuthnDeviceResponse as _svc_v1_DeleteWebAuthnDeviceResponse,
  DeleteWebAuthnDeviceResponse__Output as _svc_v1_DeleteWebAuthnDeviceResponse__Output,
} from "./svc/v1/DeleteWebAuthnDeviceResponse.ts";
import type {
  EmitAuditEventRequest as _svc_v1_EmitAuditEventRequest,
  EmitAuditEventRequest__Output as _svc_v1_EmitAuditEventRequest__Output,
} from "./svc/v1/EmitAuditEventRequest.ts";
import type {
  ExchangeAppSessionRequest as _svc_v1_ExchangeAppSessionRequest,
  ExchangeAppSessionRequest__Output as _svc_v1_ExchangeAppSessionRequest__Output,
} from "./svc/v1/ExchangeAppSessionRequest.ts";
import type {
  ExchangeSSOCodeRequest as _svc_v1_ExchangeSSOCodeRequest,
  ExchangeSSOCodeRequest__Output as _svc_v1_ExchangeSSOCodeRequest__Output,
} from "./svc/v1/ExchangeSSOCodeRequest.ts";
import type {
  ExportKrlRequest as _svc_v1_ExportKrlRequest,
  ExportKrlRequest__Output as _svc_v1_ExportKrlRequest__Output,
} from "./svc/v1/ExportKrlRequest.ts";
import type {
  ExportKrlResponse as _svc_v1_ExportKrlResponse,
  ExportKrlResponse__Output as _svc_v1_ExportKrlResponse__Output,
} from "./svc/v1/ExportKrlResponse.ts";
import type {
  FinishWebAuthnLoginRequest as _svc_v1_FinishWebAuthnLoginRequest,
  FinishWebAuthnLoginRequest__Output as _svc_v1_FinishWebAuthnLoginRequest__Output,
} from "./svc/v1/FinishWebAuthnLoginRequest.ts";
import type {
  FinishWebAuthnRegistrationRequest as _svc_v1_FinishWebAuthnRegistrationRequest,
  FinishWebAuthnRegistrationRequest__Output as _svc_v1_FinishWebAuthnRegistrationRequest__Output,
} from "./svc/v1/FinishWebAuthnRegistrationRequest.ts";
import type {
  GetAppSessionRequest as _svc_v1_GetAppSessionRequest,
  GetAppSessionRequest__Output as _svc_v1_GetAppSessionRequest__Output,
} from "./svc/v1/GetAppSessionRequest.ts";
import type {
  GetClusterInfoRequest as _svc_v1_GetClusterInfoRequest,
  GetClusterInfoRequest__Output as _svc_v1_GetClusterInfoRequest__Output,
} from "./svc/v1/GetClusterInfoRequest.ts";
import type {
  GetJoinTokenUsageRequest as _svc_v1_GetJoinTokenUsageRequest,
  GetJoinTokenUsageRequest__Output as _svc_v1_GetJoinTokenUsageRequest__Output,
} from "./svc/v1/GetJoinTokenUsageRequest.ts";
import type {
  GetPublicKeysRequest as _svc_v1_GetPublicKeysRequest,
  GetPublicKeysRequest__Output as _svc_v1_GetPublicKeysRequest__Output,
} from "./svc/v1/GetPublicKeysRequest.ts";
import type {
  GetRecordingRequest as _svc_v1_GetRecordingRequest,
  GetRecordingRequest__Output as _svc_v1_GetRecordingRequest__Output,
} from "./svc/v1/GetRecordingRequest.ts";
import type {
  GetRecordingResponse as _svc_v1_GetRecordingResponse,
  GetRecordingResponse__Output as _svc_v1_GetRecordingResponse__Output,
} from "./svc/v1/GetRecordingResponse.ts";
import type {
  GetSessionRequest as _svc_v1_GetSessionRequest,
  GetSessionRequest__Output as _svc_v1_GetSessionRequest__Output,
} from "./svc/v1/GetSessionRequest.ts";
import type {
  HeartbeatRequest as _svc_v1_HeartbeatRequest,
  HeartbeatRequest__Output as _svc_v1_HeartbeatRequest__Output,
} from "./svc/v1/HeartbeatRequest.ts";
import type {
  HeartbeatResponse as _svc_v1_HeartbeatResponse,
  HeartbeatResponse__Output as _svc_v1_HeartbeatResponse__Output,
} from "./svc/v1/HeartbeatResponse.ts";
import type {
  InventoryEvent as _svc_v1_InventoryEvent,
  InventoryEvent__Output as _svc_v1_InventoryEvent__Output,
} from "./svc/v1/InventoryEvent.ts";
import type {
  InventoryUser as _svc_v1_InventoryUser,
  InventoryUser__Output as _svc_v1_InventoryUser__Output,
} from "./svc/v1/InventoryUser.ts";
import type {
  IssueUserCertsRequest as _svc_v1_IssueUserCertsRequest,
  IssueUserCertsRequest__Output as _svc_v1_IssueUserCertsRequest__Output,
} from "./svc/v1/IssueUserCertsRequest.ts";
import type {
  IssueUserCertsResponse as _svc_v1_IssueUserCertsResponse,
  IssueUserCertsResponse__Output as _svc_v1_IssueUserCertsResponse__Output,
} from "./svc/v1/IssueUserCertsResponse.ts";
import type {
  IssueWorkloadSVIDRequest as _svc_v1_IssueWorkloadSVIDRequest,
  IssueWorkloadSVIDRequest__Output as _svc_v1_IssueWorkloadSVIDRequest__Output,
} from "./svc/v1/IssueWorkloadSVIDRequest.ts";
import type {
  IssueWorkloadSVIDResponse as _svc_v1_IssueWorkloadSVIDResponse,
  IssueWorkloadSVIDResponse__Output as _svc_v1_IssueWorkloadSVIDResponse__Output,
} from "./svc/v1/IssueWorkloadSVIDResponse.ts";
import type {
  JoinTokenInfo as _svc_v1_JoinTokenInfo,
  JoinTokenInfo__Output as _svc_v1_JoinTokenInfo__Output,
} from "./svc/v1/JoinTokenInfo.ts";
import type {
  JoinTokenUsage as _svc_v1_JoinTokenUsage,
  JoinTokenUsage__Output as _svc_v1_JoinTokenUsage__Output,
} from "./svc/v1/JoinTokenUsage.ts";
import type {
  ListAgentIdentitiesRequest as _svc_v1_ListAgentIdentitiesRequest,
  ListAgentIdentitiesRequest__Output as _svc_v1_ListAgentIdentitiesRequest__Output,
} from "./svc/v1/ListAgentIdentitiesRequest.ts";
import type {
  ListAgentIdentitiesResponse as _svc_v1_ListAgentIdentitiesResponse,
  ListAgentIdentitiesResponse__Output as _svc_v1_ListAgentIdentitiesResponse__Output,
} from "./svc/v1/ListAgentIdentitiesResponse.ts";
import type {
  ListAppsRequest as _svc_v1_ListAppsRequest,
  ListAppsRequest__Output as _svc_v1_ListAppsRequest__Output,
} from "./svc/v1/ListAppsRequest.ts";
import type {
  ListAppsResponse as _svc_v1_ListAppsResponse,
  ListAppsResponse__Output as _svc_v1_ListAppsResponse__Output,
} from "./svc/v1/ListAppsResponse.ts";
import type {
  ListCertAuthoritiesRequest as _svc_v1_ListCertAuthoritiesRequest,
  ListCertAuthoritiesRequest__Output as _svc_v1_ListCertAuthoritiesRequest__Output,
} from "./svc/v1/ListCertAuthoritiesRequest.ts";
import type {
  ListCertAuthoritiesResponse as _svc_v1_ListCertAuthoritiesResponse,
  ListCertAuthoritiesResponse__Output as _svc_v1_ListCertAuthoritiesResponse__Output,
} from "./svc/v1/ListCertAuthoritiesResponse.ts";
import type {
  ListJoinTokensRequest as _svc_v1_ListJoinTokensRequest,
  ListJoinTokensRequest__Output as _svc_v1_ListJoinTokensRequest__Output,
} from "./svc/v1/ListJoinTokensRequest.ts";
import type {
  ListJoinTokensResponse as _svc_v1_ListJoinTokensResponse,
  ListJoinTokensResponse__Output as _svc_v1_ListJoinTokensResponse__Output,
} from "./svc/v1/ListJoinTokensResponse.ts";
import type {
  ListLocksRequest as _svc_v1_ListLocksRequest,
  ListLocksRequest__Output as _svc_v1_ListLocksRequest__Output,
} from "./svc/v1/ListLocksRequest.ts";
import type {
  ListLocksResponse as _svc_v1_ListLocksResponse,
  ListLocksResponse__Output as _svc_v1_ListLocksResponse__Output,
} from "./svc/v1/ListLocksResponse.ts";
import type {
  ListNodesRequest as _svc_v1_ListNodesRequest,
  ListNodesRequest__Output as _svc_v1_ListNodesRequest__Output,
} from "./svc/v1/ListNodesRequest.ts";
import type {
  ListNodesResponse as _svc_v1_ListNodesResponse,
  ListNodesResponse__Output as _svc_v1_ListNodesResponse__Output,
} from "./svc/v1/ListNodesResponse.ts";
import type {
  ListRecordingsRequest as _svc_v1_ListRecordingsRequest,
  ListRecordingsRequest__Output as _svc_v1_ListRecordingsRequest__Output,
} from "./svc/v1/ListRecordingsRequest.ts";
import type {
  ListRecordingsResponse as _svc_v1_ListRecordingsResponse,
  ListRecordingsResponse__Output as _svc_v1_ListRecordingsResponse__Output,
} from "./svc/v1/ListRecordingsResponse.ts";
import type {
  ListRolesRequest as _svc_v1_ListRolesRequest,
  ListRolesRequest__Output as _svc_v1_ListRolesRequest__Output,
} from "./svc/v1/ListRolesRequest.ts";
import type {
  ListRolesResponse as _svc_v1_ListRolesResponse,
  ListRolesResponse__Output as _svc_v1_ListRolesResponse__Output,
} from "./svc/v1/ListRolesResponse.ts";
import type {
  ListUsersRequest as _svc_v1_ListUsersRequest,
  ListUsersRequest__Output as _svc_v1_ListUsersRequest__Output,
} from "./svc/v1/ListUsersRequest.ts";
import type {
  ListUsersResponse as _svc_v1_ListUsersResponse,
  ListUsersResponse__Output as _svc_v1_ListUsersResponse__Output,
} from "./svc/v1/ListUsersResponse.ts";
import type {
  ListWebAuthnDevicesRequest as _svc_v1_ListWebAuthnDevicesRequest,
  ListWebAuthnDevicesRequest__Output as _svc_v1_ListWebAuthnDevicesRequest__Output,
} from "./svc/v1/ListWebAuthnDevicesRequest.ts";
import type {
  ListWebAuthnDevicesResponse as _svc_v1_ListWebAuthnDevicesResponse,
  ListWebAuthnDevicesResponse__Output as _svc_v1_ListWebAuthnDevicesResponse__Output,
} from "./svc/v1/ListWebAuthnDevicesResponse.ts";
import type { Lock as _svc_v1_Lock, Lock__Output as _svc_v1_Lock__Output } from "./svc/v1/Lock.ts";
import type {
  LockTarget as _svc_v1_LockTarget,
  LockTarget__Output as _svc_v1_LockTarget__Output,
} from "./svc/v1/LockTarget.ts";
import type {
  LogoutAppsRequest as _svc_v1_LogoutAppsRequest,
  LogoutAppsRequest__Output as _svc_v1_LogoutAppsRequest__Output,
} from "./svc/v1/LogoutAppsRequest.ts";
import type {
  LogoutAppsResponse as _svc_v1_LogoutAppsResponse,
  LogoutAppsResponse__Output as _svc_v1_LogoutAppsResponse__Output,
} from "./svc/v1/LogoutAppsResponse.ts";
import type {
  MfaRequired as _svc_v1_MfaRequired,
  MfaRequired__Output as _svc_v1_MfaRequired__Output,
} from "./svc/v1/MfaRequired.ts";
import type { Node as _svc_v1_Node, Node__Output as _svc_v1_Node__Output } from "./svc/v1/Node.ts";
import type {
  PasswordResetToken as _svc_v1_PasswordResetToken,
  PasswordResetToken__Output as _svc_v1_PasswordResetToken__Output,
} from "./svc/v1/PasswordResetToken.ts";
import type {
  PublicKeys as _svc_v1_PublicKeys,
  PublicKeys__Output as _svc_v1_PublicKeys__Output,
} from "./svc/v1/PublicKeys.ts";
import type {
  Recording as _svc_v1_Recording,
  Recording__Output as _svc_v1_Recording__Output,
} from "./svc/v1/Recording.ts";
import type {
  RecordingMetadata as _svc_v1_RecordingMetadata,
  RecordingMetadata__Output as _svc_v1_RecordingMetadata__Output,
} from "./svc/v1/RecordingMetadata.ts";
import type {
  RegisterAgentRequest as _svc_v1_RegisterAgentRequest,
  RegisterAgentRequest__Output as _svc_v1_RegisterAgentRequest__Output,
} from "./svc/v1/RegisterAgentRequest.ts";
import type {
  RegisterAgentResponse as _svc_v1_RegisterAgentResponse,
  RegisterAgentResponse__Output as _svc_v1_RegisterAgentResponse__Output,
} from "./svc/v1/RegisterAgentResponse.ts";
import type {
  RegisterUsingIAMMethodRequest as _svc_v1_RegisterUsingIAMMethodRequest,
  RegisterUsingIAMMethodRequest__Output as _svc_v1_RegisterUsingIAMMethodRequest__Output,
} from "./svc/v1/RegisterUsingIAMMethodRequest.ts";
import type {
  RegisterUsingIAMMethodResponse as _svc_v1_RegisterUsingIAMMethodResponse,
  RegisterUsingIAMMethodResponse__Output as _svc_v1_RegisterUsingIAMMethodResponse__Output,
} from "./svc/v1/RegisterUsingIAMMethodResponse.ts";
import type {
  RenameWebAuthnDeviceRequest as _svc_v1_RenameWebAuthnDeviceRequest,
  RenameWebAuthnDeviceRequest__Output as _svc_v1_RenameWebAuthnDeviceRequest__Output,
} from "./svc/v1/RenameWebAuthnDeviceRequest.ts";
import type {
  RenewAgentIdentityRequest as _svc_v1_RenewAgentIdentityRequest,
  RenewAgentIdentityRequest__Output as _svc_v1_RenewAgentIdentityRequest__Output,
} from "./svc/v1/RenewAgentIdentityRequest.ts";
import type {
  RenewNodeCredentialsRequest as _svc_v1_RenewNodeCredentialsRequest,
  RenewNodeCredentialsRequest__Output as _svc_v1_RenewNodeCredentialsRequest__Output,
} from "./svc/v1/RenewNodeCredentialsRequest.ts";
import type {
  RenewNodeCredentialsResponse as _svc_v1_RenewNodeCredentialsResponse,
  RenewNodeCredentialsResponse__Output as _svc_v1_RenewNodeCredentialsResponse__Output,
} from "./svc/v1/RenewNodeCredentialsResponse.ts";
import type {
  ResetPasswordRequest as _svc_v1_ResetPasswordRequest,
  ResetPasswordRequest__Output as _svc_v1_ResetPasswordRequest__Output,
} from "./svc/v1/ResetPasswordRequest.ts";
import type {
  ResetPasswordResponse as _svc_v1_ResetPasswordResponse,
  ResetPasswordResponse__Output as _svc_v1_ResetPasswordResponse__Output,
} from "./svc/v1/ResetPasswordResponse.ts";
import type {
  RevokeUserSessionsRequest as _svc_v1_RevokeUserSessionsRequest,
  RevokeUserSessionsRequest__Output as _svc_v1_RevokeUserSessionsRequest__Output,
} from "./svc/v1/RevokeUserSessionsRequest.ts";
import type {
  RevokeUserSessionsResponse as _svc_v1_RevokeUserSessionsResponse,
  RevokeUserSessionsResponse__Output as _svc_v1_RevokeUserSessionsResponse__Output,
} from "./svc/v1/RevokeUserSessionsResponse.ts";
import type { Role as _svc_v1_Role, Role__Output as _svc_v1_Role__Output } from "./svc/v1/Role.ts";
import type {
  RotateCertAuthorityRequest as _svc_v1_RotateCertAuthorityRequest,
  RotateCertAuthorityRequest__Output as _svc_v1_RotateCertAuthorityRequest__Output,
} from "./svc/v1/RotateCertAuthorityRequest.ts";
import type {
  SSOAuthRequest as _svc_v1_SSOAuthRequest,
  SSOAuthRequest__Output as _svc_v1_SSOAuthRequest__Output,
} from "./svc/v1/SSOAuthRequest.ts";
import type {
  SearchAuditEventsRequest as _svc_v1_SearchAuditEventsRequest,
  SearchAuditEventsRequest__Output as _svc_v1_SearchAuditEventsRequest__Output,
} from "./svc/v1/SearchAuditEventsRequest.ts";
import type {
  SearchAuditEventsResponse as _svc_v1_SearchAuditEventsResponse,
  SearchAuditEventsResponse__Output as _svc_v1_SearchAuditEventsResponse__Output,
} from "./svc/v1/SearchAuditEventsResponse.ts";
import type {
  SessionEvent as _svc_v1_SessionEvent,
  SessionEvent__Output as _svc_v1_SessionEvent__Output,
} from "./svc/v1/SessionEvent.ts";
import type {
  SessionView as _svc_v1_SessionView,
  SessionView__Output as _svc_v1_SessionView__Output,
} from "./svc/v1/SessionView.ts";
import type {
  SignedStsRequest as _svc_v1_SignedStsRequest,
  SignedStsRequest__Output as _svc_v1_SignedStsRequest__Output,
} from "./svc/v1/SignedStsRequest.ts";
import type {
  TraitValues as _svc_v1_TraitValues,
  TraitValues__Output as _svc_v1_TraitValues__Output,
} from "./svc/v1/TraitValues.ts";
import type {
  TrustSnapshot as _svc_v1_TrustSnapshot,
  TrustSnapshot__Output as _svc_v1_TrustSnapshot__Output,
} from "./svc/v1/TrustSnapshot.ts";
import type {
  TunnelLocation as _svc_v1_TunnelLocation,
  TunnelLocation__Output as _svc_v1_TunnelLocation__Output,
} from "./svc/v1/TunnelLocation.ts";
import type {
  UploadRecordingRequest as _svc_v1_UploadRecordingRequest,
  UploadRecordingRequest__Output as _svc_v1_UploadRecordingRequest__Output,
} from "./svc/v1/UploadRecordingRequest.ts";
import type {
  UploadRecordingResponse as _svc_v1_UploadRecordingResponse,
  UploadRecordingResponse__Output as _svc_v1_UploadRecordingResponse__Output,
} from "./svc/v1/UploadRecordingResponse.ts";
import type { User as _svc_v1_User, User__Output as _svc_v1_User__Output } from "./svc/v1/User.ts";
import type {
  ValidateSSOResponseRequest as _svc_v1_ValidateSSOResponseRequest,
  ValidateSSOResponseRequest__Output as _svc_v1_ValidateSSOResponseRequest__Output,
} from "./svc/v1/ValidateSSOResponseRequest.ts";
import type {
  ValidateSSOResponseResult as _svc_v1_ValidateSSOResponseResult,
  ValidateSSOResponseResult__Output as _svc_v1_ValidateSSOResponseResult__Output,
} from "./svc/v1/ValidateSSOResponseResult.ts";
import type {
  WatchInventoryRequest as _svc_v1_WatchInventoryRequest,
  WatchInventoryRequest__Output as _svc_v1_WatchInventoryRequest__Output,
} from "./svc/v1/WatchInventoryRequest.ts";
import type {
  WatchSessionsRequest as _svc_v1_WatchSessionsRequest,
  WatchSessionsRequest__Output as _svc_v1_WatchSessionsRequest__Output,
} from "./svc/v1/WatchSessionsRequest.ts";
import type {
  WatchTrustRequest as _svc_v1_WatchTrustRequest,
  WatchTrustRequest__Output as _svc_v1_WatchTrustRequest__Output,
} from "./svc/v1/WatchTrustRequest.ts";
import type {
  WebAuthnChallenge as _svc_v1_WebAuthnChallenge,
  WebAuthnChallenge__Output as _svc_v1_WebAuthnChallenge__Output,
} from "./svc/v1/WebAuthnChallenge.ts";
import type {
  WebAuthnDevice as _svc_v1_WebAuthnDevice,
  WebAuthnDevice__Output as _svc_v1_WebAuthnDevice__Output,
} from "./svc/v1/WebAuthnDevice.ts";
import type {
  WebAuthnRelyingParty as _svc_v1_WebAuthnRelyingParty,
  WebAuthnRelyingParty__Output as _svc_v1_WebAuthnRelyingParty__Output,
} from "./svc/v1/WebAuthnRelyingParty.ts";

type SubtypeConstructor<Constructor extends new (...args: any) => any, Subtype> = {
  new (...args: ConstructorParameters<Constructor>): Subtype;
};

export interface ProtoGrpcType {
  svc: {
    v1: {
      AgentIdentityCredentials: MessageTypeDefinition<
        _svc_v1_AgentIdentityCredentials,
        _svc_v1_AgentIdentityCredentials__Output
      >;
      AgentIdentityInfo: MessageTypeDefinition<_svc_v1_AgentIdentityInfo, _svc_v1_AgentIdentityInfo__Output>;
      App: MessageTypeDefinition<_svc_v1_App, _svc_v1_App__Output>;
      AppHeaderValue: MessageTypeDefinition<_svc_v1_AppHeaderValue, _svc_v1_AppHeaderValue__Output>;
      AppSessionGrant: MessageTypeDefinition<_svc_v1_AppSessionGrant, _svc_v1_AppSessionGrant__Output>;
      AuditEvent: MessageTypeDefinition<_svc_v1_AuditEvent, _svc_v1_AuditEvent__Output>;
      AuthService: SubtypeConstructor<typeof grpc.Client, _svc_v1_AuthServiceClient> & {
        service: _svc_v1_AuthServiceDefinition;
      };
      AuthenticateLocalRequest: MessageTypeDefinition<
        _svc_v1_AuthenticateLocalRequest,
        _svc_v1_AuthenticateLocalRequest__Output
      >;
      AuthenticateLocalResponse: MessageTypeDefinition<
        _svc_v1_AuthenticateLocalResponse,
        _svc_v1_AuthenticateLocalResponse__Output
      >;
      AuthenticateSPIFFERequest: MessageTypeDefinition<
        _svc_v1_AuthenticateSPIFFERequest,
        _svc_v1_AuthenticateSPIFFERequest__Output
      >;
      AuthenticateSPIFFEResponse: MessageTypeDefinition<
        _svc_v1_AuthenticateSPIFFEResponse,
        _svc_v1_AuthenticateSPIFFEResponse__Output
      >;
      AuthorizeNodeLoginRequest: MessageTypeDefinition<
        _svc_v1_AuthorizeNodeLoginRequest,
        _svc_v1_AuthorizeNodeLoginRequest__Output
      >;
      AuthorizeSshLoginRequest: MessageTypeDefinition<
        _svc_v1_AuthorizeSshLoginRequest,
        _svc_v1_AuthorizeSshLoginRequest__Output
      >;
      AuthorizeSshLoginResponse: MessageTypeDefinition<
        _svc_v1_AuthorizeSshLoginResponse,
        _svc_v1_AuthorizeSshLoginResponse__Output
      >;
      BeginWebAuthnLoginRequest: MessageTypeDefinition<
        _svc_v1_BeginWebAuthnLoginRequest,
        _svc_v1_BeginWebAuthnLoginRequest__Output
      >;
      BeginWebAuthnRegistrationRequest: MessageTypeDefinition<
        _svc_v1_BeginWebAuthnRegistrationRequest,
        _svc_v1_BeginWebAuthnRegistrationRequest__Output
      >;
      BindSSOAuthRequestRequest: MessageTypeDefinition<
        _svc_v1_BindSSOAuthRequestRequest,
        _svc_v1_BindSSOAuthRequestRequest__Output
      >;
      BootstrapAgentIdentityRequest: MessageTypeDefinition<
        _svc_v1_BootstrapAgentIdentityRequest,
        _svc_v1_BootstrapAgentIdentityRequest__Output
      >;
      CaKey: MessageTypeDefinition<_svc_v1_CaKey, _svc_v1_CaKey__Output>;
      CertAuthorityStatus: MessageTypeDefinition<
        _svc_v1_CertAuthorityStatus,
        _svc_v1_CertAuthorityStatus__Output
      >;
      CheckNodeRegisteredRequest: MessageTypeDefinition<
        _svc_v1_CheckNodeRegisteredRequest,
        _svc_v1_CheckNodeRegisteredRequest__Output
      >;
      CheckNodeRegisteredResponse: MessageTypeDefinition<
        _svc_v1_CheckNodeRegisteredResponse,
        _svc_v1_CheckNodeRegisteredResponse__Output
      >;
      ClusterInfo: MessageTypeDefinition<_svc_v1_ClusterInfo, _svc_v1_ClusterInfo__Output>;
      CreateAgentIdentityRequest: MessageTypeDefinition<
        _svc_v1_CreateAgentIdentityRequest,
        _svc_v1_CreateAgentIdentityRequest__Output
      >;
      CreateAgentIdentityResponse: MessageTypeDefinition<
        _svc_v1_CreateAgentIdentityResponse,
        _svc_v1_CreateAgentIdentityResponse__Output
      >;
      CreateAppSessionRequest: MessageTypeDefinition<
        _svc_v1_CreateAppSessionRequest,
        _svc_v1_CreateAppSessionRequest__Output
      >;
      CreateAppSessionResponse: MessageTypeDefinition<
        _svc_v1_CreateAppSessionResponse,
        _svc_v1_CreateAppSessionResponse__Output
      >;
      CreateJoinTokenRequest: MessageTypeDefinition<
        _svc_v1_CreateJoinTokenRequest,
        _svc_v1_CreateJoinTokenRequest__Output
      >;
      CreateJoinTokenResponse: MessageTypeDefinition<
        _svc_v1_CreateJoinTokenResponse,
        _svc_v1_CreateJoinTokenResponse__Output
      >;
      CreateLockRequest: MessageTypeDefinition<_svc_v1_CreateLockRequest, _svc_v1_CreateLockRequest__Output>;
      CreatePasswordResetRequest: MessageTypeDefinition<
        _svc_v1_CreatePasswordResetRequest,
        _svc_v1_CreatePasswordResetRequest__Output
      >;
      CreateSSOAuthRequestRequest: MessageTypeDefinition<
        _svc_v1_CreateSSOAuthRequestRequest,
        _svc_v1_CreateSSOAuthRequestRequest__Output
      >;
      CreateUserRequest: MessageTypeDefinition<_svc_v1_CreateUserRequest, _svc_v1_CreateUserRequest__Output>;
      CreateUserResponse: MessageTypeDefinition<
        _svc_v1_CreateUserResponse,
        _svc_v1_CreateUserResponse__Output
      >;
      DeleteAgentIdentityRequest: MessageTypeDefinition<
        _svc_v1_DeleteAgentIdentityRequest,
        _svc_v1_DeleteAgentIdentityRequest__Output
      >;
      DeleteAgentIdentityResponse: MessageTypeDefinition<
        _svc_v1_DeleteAgentIdentityResponse,
        _svc_v1_DeleteAgentIdentityResponse__Output
      >;
      DeleteAppSessionRequest: MessageTypeDefinition<
        _svc_v1_DeleteAppSessionRequest,
        _svc_v1_DeleteAppSessionRequest__Output
      >;
      DeleteAppSessionResponse: MessageTypeDefinition<
        _svc_v1_DeleteAppSessionResponse,
        _svc_v1_DeleteAppSessionResponse__Output
      >;
      DeleteJoinTokenRequest: MessageTypeDefinition<
        _svc_v1_DeleteJoinTokenRequest,
        _svc_v1_DeleteJoinTokenRequest__Output
      >;
      DeleteJoinTokenResponse: MessageTypeDefinition<
        _svc_v1_DeleteJoinTokenResponse,
        _svc_v1_DeleteJoinTokenResponse__Output
      >;
      DeleteLockRequest: MessageTypeDefinition<_svc_v1_DeleteLockRequest, _svc_v1_DeleteLockRequest__Output>;
      DeleteLockResponse: MessageTypeDefinition<
        _svc_v1_DeleteLockResponse,
        _svc_v1_DeleteLockResponse__Output
      >;
      DeleteNodeRequest: MessageTypeDefinition<_svc_v1_DeleteNodeRequest, _svc_v1_DeleteNodeRequest__Output>;
      DeleteNodeResponse: MessageTypeDefinition<
        _svc_v1_DeleteNodeResponse,
        _svc_v1_DeleteNodeResponse__Output
      >;
      DeleteSessionRequest: MessageTypeDefinition<
        _svc_v1_DeleteSessionRequest,
        _svc_v1_DeleteSessionRequest__Output
      >;
      DeleteSessionResponse: MessageTypeDefinition<
        _svc_v1_DeleteSessionResponse,
        _svc_v1_DeleteSessionResponse__Output
      >;
      DeleteUserRequest: MessageTypeDefinition<_svc_v1_DeleteUserRequest, _svc_v1_DeleteUserRequest__Output>;
      DeleteUserResponse: MessageTypeDefinition<
        _svc_v1_DeleteUserResponse,
        _svc_v1_DeleteUserResponse__Output
      >;
      DeleteWebAuthnDeviceRequest: MessageTypeDefinition<
        _svc_v1_DeleteWebAuthnDeviceRequest,
        _svc_v1_DeleteWebAuthnDeviceRequest__Output
      >;
      DeleteWebAuthnDeviceResponse: MessageTypeDefinition<
        _svc_v1_DeleteWebAuthnDeviceResponse,
        _svc_v1_DeleteWebAuthnDeviceResponse__Output
      >;
      EmitAuditEventRequest: MessageTypeDefinition<
        _svc_v1_EmitAuditEventRequest,
        _svc_v1_EmitAuditEventRequest__Output
      >;
      ExchangeAppSessionRequest: MessageTypeDefinition<
        _svc_v1_ExchangeAppSessionRequest,
        _svc_v1_ExchangeAppSessionRequest__Output
      >;
      ExchangeSSOCodeRequest: MessageTypeDefinition<
        _svc_v1_ExchangeSSOCodeRequest,
        _svc_v1_ExchangeSSOCodeRequest__Output
      >;
      ExportKrlRequest: MessageTypeDefinition<_svc_v1_ExportKrlRequest, _svc_v1_ExportKrlRequest__Output>;
      ExportKrlResponse: MessageTypeDefinition<_svc_v1_ExportKrlResponse, _svc_v1_ExportKrlResponse__Output>;
      FinishWebAuthnLoginRequest: MessageTypeDefinition<
        _svc_v1_FinishWebAuthnLoginRequest,
        _svc_v1_FinishWebAuthnLoginRequest__Output
      >;
      FinishWebAuthnRegistrationRequest: MessageTypeDefinition<
        _svc_v1_FinishWebAuthnRegistrationRequest,
        _svc_v1_FinishWebAuthnRegistrationRequest__Output
      >;
      GetAppSessionRequest: MessageTypeDefinition<
        _svc_v1_GetAppSessionRequest,
        _svc_v1_GetAppSessionRequest__Output
      >;
      GetClusterInfoRequest: MessageTypeDefinition<
        _svc_v1_GetClusterInfoRequest,
        _svc_v1_GetClusterInfoRequest__Output
      >;
      GetJoinTokenUsageRequest: MessageTypeDefinition<
        _svc_v1_GetJoinTokenUsageRequest,
        _svc_v1_GetJoinTokenUsageRequest__Output
      >;
      GetPublicKeysRequest: MessageTypeDefinition<
        _svc_v1_GetPublicKeysRequest,
        _svc_v1_GetPublicKeysRequest__Output
      >;
      GetRecordingRequest: MessageTypeDefinition<
        _svc_v1_GetRecordingRequest,
        _svc_v1_GetRecordingRequest__Output
      >;
      GetRecordingResponse: MessageTypeDefinition<
        _svc_v1_GetRecordingResponse,
        _svc_v1_GetRecordingResponse__Output
      >;
      GetSessionRequest: MessageTypeDefinition<_svc_v1_GetSessionRequest, _svc_v1_GetSessionRequest__Output>;
      HeartbeatRequest: MessageTypeDefinition<_svc_v1_HeartbeatRequest, _svc_v1_HeartbeatRequest__Output>;
      HeartbeatResponse: MessageTypeDefinition<_svc_v1_HeartbeatResponse, _svc_v1_HeartbeatResponse__Output>;
      InventoryEvent: MessageTypeDefinition<_svc_v1_InventoryEvent, _svc_v1_InventoryEvent__Output>;
      InventoryUser: MessageTypeDefinition<_svc_v1_InventoryUser, _svc_v1_InventoryUser__Output>;
      IssueUserCertsRequest: MessageTypeDefinition<
        _svc_v1_IssueUserCertsRequest,
        _svc_v1_IssueUserCertsRequest__Output
      >;
      IssueUserCertsResponse: MessageTypeDefinition<
        _svc_v1_IssueUserCertsResponse,
        _svc_v1_IssueUserCertsResponse__Output
      >;
      IssueWorkloadSVIDRequest: MessageTypeDefinition<
        _svc_v1_IssueWorkloadSVIDRequest,
        _svc_v1_IssueWorkloadSVIDRequest__Output
      >;
      IssueWorkloadSVIDResponse: MessageTypeDefinition<
        _svc_v1_IssueWorkloadSVIDResponse,
        _svc_v1_IssueWorkloadSVIDResponse__Output
      >;
      JoinTokenInfo: MessageTypeDefinition<_svc_v1_JoinTokenInfo, _svc_v1_JoinTokenInfo__Output>;
      JoinTokenUsage: MessageTypeDefinition<_svc_v1_JoinTokenUsage, _svc_v1_JoinTokenUsage__Output>;
      ListAgentIdentitiesRequest: MessageTypeDefinition<
        _svc_v1_ListAgentIdentitiesRequest,
        _svc_v1_ListAgentIdentitiesRequest__Output
      >;
      ListAgentIdentitiesResponse: MessageTypeDefinition<
        _svc_v1_ListAgentIdentitiesResponse,
        _svc_v1_ListAgentIdentitiesResponse__Output
      >;
      ListAppsRequest: MessageTypeDefinition<_svc_v1_ListAppsRequest, _svc_v1_ListAppsRequest__Output>;
      ListAppsResponse: MessageTypeDefinition<_svc_v1_ListAppsResponse, _svc_v1_ListAppsResponse__Output>;
      ListCertAuthoritiesRequest: MessageTypeDefinition<
        _svc_v1_ListCertAuthoritiesRequest,
        _svc_v1_ListCertAuthoritiesRequest__Output
      >;
      ListCertAuthoritiesResponse: MessageTypeDefinition<
        _svc_v1_ListCertAuthoritiesResponse,
        _svc_v1_ListCertAuthoritiesResponse__Output
      >;
      ListJoinTokensRequest: MessageTypeDefinition<
        _svc_v1_ListJoinTokensRequest,
        _svc_v1_ListJoinTokensRequest__Output
      >;
      ListJoinTokensResponse: MessageTypeDefinition<
        _svc_v1_ListJoinTokensResponse,
        _svc_v1_ListJoinTokensResponse__Output
      >;
      ListLocksRequest: MessageTypeDefinition<_svc_v1_ListLocksRequest, _svc_v1_ListLocksRequest__Output>;
      ListLocksResponse: MessageTypeDefinition<_svc_v1_ListLocksResponse, _svc_v1_ListLocksResponse__Output>;
      ListNodesRequest: MessageTypeDefinition<_svc_v1_ListNodesRequest, _svc_v1_ListNodesRequest__Output>;
      ListNodesResponse: MessageTypeDefinition<_svc_v1_ListNodesResponse, _svc_v1_ListNodesResponse__Output>;
      ListRecordingsRequest: MessageTypeDefinition<
        _svc_v1_ListRecordingsRequest,
        _svc_v1_ListRecordingsRequest__Output
      >;
      ListRecordingsResponse: MessageTypeDefinition<
        _svc_v1_ListRecordingsResponse,
        _svc_v1_ListRecordingsResponse__Output
      >;
      ListRolesRequest: MessageTypeDefinition<_svc_v1_ListRolesRequest, _svc_v1_ListRolesRequest__Output>;
      ListRolesResponse: MessageTypeDefinition<_svc_v1_ListRolesResponse, _svc_v1_ListRolesResponse__Output>;
      ListUsersRequest: MessageTypeDefinition<_svc_v1_ListUsersRequest, _svc_v1_ListUsersRequest__Output>;
      ListUsersResponse: MessageTypeDefinition<_svc_v1_ListUsersResponse, _svc_v1_ListUsersResponse__Output>;
      ListWebAuthnDevicesRequest: MessageTypeDefinition<
        _svc_v1_ListWebAuthnDevicesRequest,
        _svc_v1_ListWebAuthnDevicesRequest__Output
      >;
      ListWebAuthnDevicesResponse: MessageTypeDefinition<
        _svc_v1_ListWebAuthnDevicesResponse,
        _svc_v1_ListWebAuthnDevicesResponse__Output
      >;
      Lock: MessageTypeDefinition<_svc_v1_Lock, _svc_v1_Lock__Output>;
      LockTarget: MessageTypeDefinition<_svc_v1_LockTarget, _svc_v1_LockTarget__Output>;
      LogoutAppsRequest: MessageTypeDefinition<_svc_v1_LogoutAppsRequest, _svc_v1_LogoutAppsRequest__Output>;
      LogoutAppsResponse: MessageTypeDefinition<
        _svc_v1_LogoutAppsResponse,
        _svc_v1_LogoutAppsResponse__Output
      >;
      MfaRequired: MessageTypeDefinition<_svc_v1_MfaRequired, _svc_v1_MfaRequired__Output>;
      Node: MessageTypeDefinition<_svc_v1_Node, _svc_v1_Node__Output>;
      PasswordResetToken: MessageTypeDefinition<
        _svc_v1_PasswordResetToken,
        _svc_v1_PasswordResetToken__Output
      >;
      PublicKeys: MessageTypeDefinition<_svc_v1_PublicKeys, _svc_v1_PublicKeys__Output>;
      Recording: MessageTypeDefinition<_svc_v1_Recording, _svc_v1_Recording__Output>;
      RecordingMetadata: MessageTypeDefinition<_svc_v1_RecordingMetadata, _svc_v1_RecordingMetadata__Output>;
      RegisterAgentRequest: MessageTypeDefinition<
        _svc_v1_RegisterAgentRequest,
        _svc_v1_RegisterAgentRequest__Output
      >;
      RegisterAgentResponse: MessageTypeDefinition<
        _svc_v1_RegisterAgentResponse,
        _svc_v1_RegisterAgentResponse__Output
      >;
      RegisterUsingIAMMethodRequest: MessageTypeDefinition<
        _svc_v1_RegisterUsingIAMMethodRequest,
        _svc_v1_RegisterUsingIAMMethodRequest__Output
      >;
      RegisterUsingIAMMethodResponse: MessageTypeDefinition<
        _svc_v1_RegisterUsingIAMMethodResponse,
        _svc_v1_RegisterUsingIAMMethodResponse__Output
      >;
      RenameWebAuthnDeviceRequest: MessageTypeDefinition<
        _svc_v1_RenameWebAuthnDeviceRequest,
        _svc_v1_RenameWebAuthnDeviceRequest__Output
      >;
      RenewAgentIdentityRequest: MessageTypeDefinition<
        _svc_v1_RenewAgentIdentityRequest,
        _svc_v1_RenewAgentIdentityRequest__Output
      >;
      RenewNodeCredentialsRequest: MessageTypeDefinition<
        _svc_v1_RenewNodeCredentialsRequest,
        _svc_v1_RenewNodeCredentialsRequest__Output
      >;
      RenewNodeCredentialsResponse: MessageTypeDefinition<
        _svc_v1_RenewNodeCredentialsResponse,
        _svc_v1_RenewNodeCredentialsResponse__Output
      >;
      ResetPasswordRequest: MessageTypeDefinition<
        _svc_v1_ResetPasswordRequest,
        _svc_v1_ResetPasswordRequest__Output
      >;
      ResetPasswordResponse: MessageTypeDefinition<
        _svc_v1_ResetPasswordResponse,
        _svc_v1_ResetPasswordResponse__Output
      >;
      RevokeUserSessionsRequest: MessageTypeDefinition<
        _svc_v1_RevokeUserSessionsRequest,
        _svc_v1_RevokeUserSessionsRequest__Output
      >;
      RevokeUserSessionsResponse: MessageTypeDefinition<
        _svc_v1_RevokeUserSessionsResponse,
        _svc_v1_RevokeUserSessionsResponse__Output
      >;
      Role: MessageTypeDefinition<_svc_v1_Role, _svc_v1_Role__Output>;
      RotateCertAuthorityRequest: MessageTypeDefinition<
        _svc_v1_RotateCertAuthorityRequest,
        _svc_v1_RotateCertAuthorityRequest__Output
      >;
      SSOAuthRequest: MessageTypeDefinition<_svc_v1_SSOAuthRequest, _svc_v1_SSOAuthRequest__Output>;
      SearchAuditEventsRequest: MessageTypeDefinition<
        _svc_v1_SearchAuditEventsRequest,
        _svc_v1_SearchAuditEventsRequest__Output
      >;
      SearchAuditEventsResponse: MessageTypeDefinition<
        _svc_v1_SearchAuditEventsResponse,
        _svc_v1_SearchAuditEventsResponse__Output
      >;
      SessionEvent: MessageTypeDefinition<_svc_v1_SessionEvent, _svc_v1_SessionEvent__Output>;
      SessionView: MessageTypeDefinition<_svc_v1_SessionView, _svc_v1_SessionView__Output>;
      SignedStsRequest: MessageTypeDefinition<_svc_v1_SignedStsRequest, _svc_v1_SignedStsRequest__Output>;
      TraitValues: MessageTypeDefinition<_svc_v1_TraitValues, _svc_v1_TraitValues__Output>;
      TrustSnapshot: MessageTypeDefinition<_svc_v1_TrustSnapshot, _svc_v1_TrustSnapshot__Output>;
      TunnelLocation: MessageTypeDefinition<_svc_v1_TunnelLocation, _svc_v1_TunnelLocation__Output>;
      UploadRecordingRequest: MessageTypeDefinition<
        _svc_v1_UploadRecordingRequest,
        _svc_v1_UploadRecordingRequest__Output
      >;
      UploadRecordingResponse: MessageTypeDefinition<
        _svc_v1_UploadRecordingResponse,
        _svc_v1_UploadRecordingResponse__Output
      >;
      User: MessageTypeDefinition<_svc_v1_User, _svc_v1_User__Output>;
      ValidateSSOResponseRequest: MessageTypeDefinition<
        _svc_v1_ValidateSSOResponseRequest,
        _svc_v1_ValidateSSOResponseRequest__Output
      >;
      ValidateSSOResponseResult: MessageTypeDefinition<
        _svc_v1_ValidateSSOResponseResult,
        _svc_v1_ValidateSSOResponseResult__Output
      >;
      WatchInventoryRequest: MessageTypeDefinition<
        _svc_v1_WatchInventoryRequest,
        _svc_v1_WatchInventoryRequest__Output
      >;
      WatchSessionsRequest: MessageTypeDefinition<
        _svc_v1_WatchSessionsRequest,
        _svc_v1_WatchSessionsRequest__Output
      >;
      WatchTrustRequest: MessageTypeDefinition<_svc_v1_WatchTrustRequest, _svc_v1_WatchTrustRequest__Output>;
      WebAuthnChallenge: MessageTypeDefinition<_svc_v1_WebAuthnChallenge, _svc_v1_WebAuthnChallenge__Output>;
      WebAuthnDevice: MessageTypeDefinition<_svc_v1_WebAuthnDevice, _svc_v1_WebAuthnDevice__Output>;
      WebAuthnRelyingParty: MessageTypeDefinition<
        _svc_v1_WebAuthnRelyingParty,
        _svc_v1_WebAuthnRelyingParty__Output
      >;
    };
  };
}
