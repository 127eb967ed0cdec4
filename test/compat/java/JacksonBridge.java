import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.BufferedReader;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.lang.reflect.ParameterizedType;
import java.lang.reflect.RecordComponent;
import java.lang.reflect.Type;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The compatibility suite's window on real Jackson (test/compat). It holds records with the
 * same names, components and types as the incumbent's reference SDK (written here by us from
 * the list in test/compat/sdk-records.ts; the suite checks that the two agree) and serialises
 * and reads them the way that SDK does: a default ObjectMapper, configured with
 * NON_NULL inclusion for the entity records as the SDK's EntityService is (UserService,
 * AccountService, KYBService and CardService configure nothing).
 *
 * Protocol: one JSON object per line on stdin, one JSON object per line on stdout.
 *   {"op":"write","record":R,"values":{...},"include":"sdk"|"always"|"non_null"}
 *       → {"ok":true,"json":"<the bytes Jackson writes>"}: the record is built from `values`
 *         (components left out are null, 0 or false, as a Java constructor call would pass
 *         them), then written.
 *   {"op":"read","record":R,"json":"..."} → {"ok":true} or {"ok":false,"error":"..."}
 *   {"op":"records"} → {"ok":true,"records":[{"name":R,"components":[[name,type],...]}]}
 * Any failure of a request is answered as {"ok":false,"error":"..."}; the process ends when
 * stdin closes.
 */
public class JacksonBridge {

  // EntityService
  public record EntityInfoRequest(String entity_id) {}

  public record EntityInfoResponse(
      String id, String date_created, String name, String trading_name, String entity_type, String email,
      boolean approved,
      String first_name, String last_name, String phone_number, String gender, String date_of_birth,
      String id_number, String id_type, String id_issue_date, String id_issue_expiry_date, String city,
      String residency, String title, String permit_number) {}

  public record UpdateAddressRequest(
      String entity_id, String address_line_1, String address_line_2, String state, String postcode,
      String country, String city) {}

  public record UpdateAddressResponse() {}

  public record Address(String address_line_1, String address_line_2, String city, String state, String postcode) {}

  public record CreateEntityRequest(
      String name, String trading_name, String tax_number, String registration_number, String entity_type,
      String purpose, String email, String country,
      String first_name, String last_name, String phone_number, String gender, String date_of_birth,
      String id_number, String id_type, String id_issue_date, String id_issue_expiry_date, String city,
      String residency, String title, String permit_number,
      Address address) {}

  public record CreateEntityResponse(String id, boolean user_ready, String user_id) {}

  public record Entity(
      String id, String name, String trading_name, String registration_number, String email, String created_at,
      String entity_type,
      String first_name, String last_name, String phone_number, String gender, String date_of_birth,
      String id_number, String id_type, String id_issue_date, String id_issue_expiry_date, String city,
      String residency, String title, String permit_number) {}

  public record ListEntityRequest() {}

  public record ListEntityResponse(List<Entity> entities) {}

  // UserService
  public record CreateUserRequest(
      String first_name, String last_name, String email, String entity_id, String gender, String date_of_birth,
      String country, String city, String residency, String id_number, String id_type, String id_issue_date,
      String id_issue_expiry_date, String phone_number, String title,
      boolean verified,
      String permit_number) {}

  public record CreateUserResponse(String userId) {}

  public record UpdateUserProfileRequest(
      String user_id, String first_name, String last_name, String email, String phone_number, String gender,
      String date_of_birth, String birth_country, String birth_city, String residency, String id_number,
      String id_type, String id_issue_date, String id_issue_expiry_date, String title, String permit_number) {}

  public record UpdateUserProfileResponse(String userId) {}

  public record ListUserRequest(String entity_id) {}

  public record ListUserResponse(List<User> users) {}

  public record User(
      String id, String first_name, String last_name, String email, String phone_number, String entity_id,
      String created_at, String updated_at,
      boolean verified,
      String verified_at, String gender, String date_of_birth, String country, String city, String residency,
      String id_number, String id_type, String id_issue_date, String id_issue_expiry, String title,
      String date_registered, String permit_number, String kyc_status, String kyc_submitted_at,
      String kyc_reviewed_at) {}

  public record UploadKYCDocumentsRequest(String user_id, String id_document, String proof_of_residence) {}

  public record UploadKYCDocumentsResponse(boolean success, String message) {}

  // AccountService
  public static class Metadata extends HashMap<String, String> {}

  public record OpenAccountRequest(String entity_id) {}

  public record OpenAccountResponse(
      String account_id, String entity_id, String account_number, String country, String created_at,
      String account_type, Metadata metadata) {}

  public record GetAccountDetailsRequest(String account_id) {}

  public record GetAccountDetailsResponse(
      String account_id, String account_number, String balance, String available_balance, String account_type,
      Metadata metadata) {}

  public record TransferEFTRTCRequest(
      String account_id, String clientTxId,
      int amount,
      String ref, String own_ref, String account_number, String branch_code, String name,
      boolean pay_and_clear,
      String notification_email, String notification_name, String beneficiary_id,
      int beneficiary_version) {}

  public record TransferEFTRTCResponse(String tx_id, String amount) {}

  public record TransferInternalRequest(
      String account_id, String clientTxId,
      int amount,
      String ref, String own_ref, String account_number, String name, String notification_email,
      String notification_name, String beneficiary_id,
      int beneficiary_version) {}

  public record GetTransactionsRequest(String account_id, UUIDs filter_user_ids) {}

  public record GetTransactionsResponse(String account_id, List<Transaction> transactions) {}

  public record Transaction(
      String tx_id, String parent_tx_id, String date, String amount, String ref, String status, String tx_sha,
      String user_id, String added_by, String tx_type, String tx_payment_type, String fee, String recipient_name,
      String credit, String debit, String running_balance,
      boolean verified) {}

  public record UUIDs() {}

  public record AccountSummary(
      String account_id, String account_number, String created_at, String account_type, Metadata metadata) {}

  public record GetAccountsByEntityRequest(String entity_id) {}

  public record GetAccountsByEntityResponse(String entity_id, List<AccountSummary> accounts) {}

  public record GetTransactionByIdRequest(String tx_id) {}

  public record GetTransactionByIdResponse(Transaction transaction) {}

  // KYBService
  public record Director(
      String id, String name,
      boolean approved, boolean verified,
      List<Document> documents,
      boolean verification_sent,
      String id_type,
      Map<String, Object> metadata) {}

  public record Document(String key, String doc_type, String rejection_reason, boolean approved) {}

  public record GetKYBRequest(String entity_id) {}

  public record GetKYBResponse(
      String entity_id, List<Document> documents, List<Director> directors, Map<String, Object> metadata,
      String state, String rejection_reason) {}

  public record SubmitDocumentsRequest(String entity_id, List<String> documents, Map<String, List<String>> directors) {}

  public record SubmitDocumentsResponse() {}

  public record UpdateKYBRequest(String entity_id, Map<String, Object> metadata) {}

  public record UpdateKYBResponse(
      String entity_id, List<Document> documents, List<Director> directors, Map<String, Object> metadata) {}

  public record SendDirectorVerificationLinkRequest(String entity_id, String director_id, String email) {}

  public record SendDirectorVerificationLinkResponse() {}

  public record UpdateDirectorRequest(
      String entity_id, String director_id, String full_name, String email, Map<String, Object> metadata) {}

  public record UpdateDirectorResponse() {}

  // CardService (its UUIDs record is AccountService's above: both are empty)
  public record CardExtras(JsonTime auto_lock) {}

  public record CardFeatures(
      boolean domestic, boolean international, boolean e_commerce, boolean atm, boolean pos,
      boolean contactless) {}

  public record CardLimits(
      boolean transaction_enabled, int transaction, boolean daily_enabled, int daily,
      boolean monthly_enabled, int monthly, boolean yearly_enabled, int yearly) {}

  public record JsonTime() {}

  public record RequestCardRequest(
      String account_id, String user_id, String name, int type, int use_type, CardFeatures features,
      CardLimits limits, CardExtras extras) {}

  public record RequestCardResponse(String id) {}

  public record CardRequestView(
      String id, String name, int type, int use_type, String created_at, String requested_by,
      String assigned_to, CardFeatures features, CardLimits limits, CardExtras extras, String status) {}

  public record ListOrganisationCardRequestsRequest(String account_id, UUIDs user_ids) {}

  public record ListOrganisationCardRequestsResponse(String id, List<CardRequestView> requests) {}

  public record RespondToCardRequestRequest(
      String entity_id, String account_id, String initiator, String request_id, boolean approved) {}

  public record RespondToCardRequestResponse() {}

  public record EditCardRequest(
      String entity_id, String card_id, String name, CardFeatures features, CardLimits limits,
      CardExtras extras) {}

  public record EditCardResponse() {}

  public record CardView(
      String id, String name, int type, int use_type, String last_4, String date_created, String user_id,
      String org_id, CardFeatures features, CardLimits limits, CardExtras extras, String status) {}

  public record ListOrganisationCardsRequest(String entity_id, String account_id, UUIDs user_ids) {}

  public record ListOrganisationCardsResponse(String id, List<CardView> cards) {}

  public record GetCardDetailsRequest(String account_id, String initiator, String id) {}

  public record GetCardDetailsResponse(String card_number, String expiry_date, String cvv) {}

  public record UpdateCardStatusRequest(String account_id, String initiator, String id, String status) {}

  public record UpdateCardStatusResponse() {}

  public record ActivateCardRequest(String account_id, String initiator, String id, String last_4) {}

  public record ActivateCardResponse() {}

  public record SetPINRequest(String account_id, String initiator, String id, String pin) {}

  public record SetPINResponse() {}

  private static final List<Class<?>> ENTITY_RECORDS = List.of(
      EntityInfoRequest.class, EntityInfoResponse.class, UpdateAddressRequest.class, UpdateAddressResponse.class,
      Address.class, CreateEntityRequest.class, CreateEntityResponse.class, Entity.class, ListEntityRequest.class,
      ListEntityResponse.class);

  private static final List<Class<?>> OTHER_RECORDS = List.of(
      CreateUserRequest.class, CreateUserResponse.class, UpdateUserProfileRequest.class,
      UpdateUserProfileResponse.class, ListUserRequest.class, ListUserResponse.class, User.class,
      UploadKYCDocumentsRequest.class, UploadKYCDocumentsResponse.class, OpenAccountRequest.class, OpenAccountResponse.class, GetAccountDetailsRequest.class,
      GetAccountDetailsResponse.class, TransferEFTRTCRequest.class, TransferEFTRTCResponse.class,
      TransferInternalRequest.class, GetTransactionsRequest.class, GetTransactionsResponse.class,
      Transaction.class, UUIDs.class, AccountSummary.class, GetAccountsByEntityRequest.class,
      GetAccountsByEntityResponse.class, GetTransactionByIdRequest.class, GetTransactionByIdResponse.class,
      Director.class, Document.class, GetKYBRequest.class, GetKYBResponse.class, SubmitDocumentsRequest.class,
      SubmitDocumentsResponse.class, UpdateKYBRequest.class, UpdateKYBResponse.class,
      SendDirectorVerificationLinkRequest.class, SendDirectorVerificationLinkResponse.class,
      UpdateDirectorRequest.class, UpdateDirectorResponse.class);

  private static final List<Class<?>> CARD_RECORDS = List.of(
      CardExtras.class, CardFeatures.class, CardLimits.class, JsonTime.class, RequestCardRequest.class,
      RequestCardResponse.class, CardRequestView.class, ListOrganisationCardRequestsRequest.class,
      ListOrganisationCardRequestsResponse.class, RespondToCardRequestRequest.class,
      RespondToCardRequestResponse.class, EditCardRequest.class, EditCardResponse.class, CardView.class,
      ListOrganisationCardsRequest.class, ListOrganisationCardsResponse.class, GetCardDetailsRequest.class,
      GetCardDetailsResponse.class, UpdateCardStatusRequest.class, UpdateCardStatusResponse.class,
      ActivateCardRequest.class, ActivateCardResponse.class, SetPINRequest.class, SetPINResponse.class);

  private static final Map<String, Class<?>> RECORDS = new LinkedHashMap<>();

  static {
    for (Class<?> c : ENTITY_RECORDS) RECORDS.put(c.getSimpleName(), c);
    for (Class<?> c : OTHER_RECORDS) RECORDS.put(c.getSimpleName(), c);
    for (Class<?> c : CARD_RECORDS) RECORDS.put(c.getSimpleName(), c);
  }

  /** The SDK's UserService, AccountService, KYBService and CardService mapper: nothing configured. */
  private static final ObjectMapper DEFAULT_MAPPER = new ObjectMapper();

  /** The SDK's EntityService mapper: nulls are left out when writing. */
  private static final ObjectMapper NON_NULL_MAPPER =
      new ObjectMapper().setSerializationInclusion(JsonInclude.Include.NON_NULL);

  /** Encodes this program's own protocol lines; never a record. */
  private static final ObjectMapper PROTOCOL = new ObjectMapper();

  public static void main(String[] args) throws IOException {
    BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    PrintStream out = new PrintStream(new FileOutputStream(FileDescriptor.out), true, StandardCharsets.UTF_8);
    String line;
    while ((line = in.readLine()) != null) {
      if (line.isBlank()) continue;
      out.println(PROTOCOL.writeValueAsString(answer(line)));
      out.flush();
    }
  }

  private static Map<String, Object> answer(String line) {
    try {
      JsonNode request = PROTOCOL.readTree(line);
      String op = request.path("op").asText();
      switch (op) {
        case "records":
          return Map.of("ok", true, "records", describeRecords());
        case "write":
          return write(recordClass(request), request.path("values"), request.path("include").asText("sdk"));
        case "read":
          return read(recordClass(request), request.path("json").asText());
        default:
          return failure("unknown op " + op);
      }
    } catch (Exception e) {
      return failure(describe(e));
    }
  }

  private static Class<?> recordClass(JsonNode request) {
    String name = request.path("record").asText();
    Class<?> c = RECORDS.get(name);
    if (c == null) throw new IllegalArgumentException("no record named " + name);
    return c;
  }

  private static ObjectMapper mapperFor(Class<?> c, String include) {
    switch (include) {
      case "always":
        return DEFAULT_MAPPER;
      case "non_null":
        return NON_NULL_MAPPER;
      case "sdk":
        return ENTITY_RECORDS.contains(c) ? NON_NULL_MAPPER : DEFAULT_MAPPER;
      default:
        throw new IllegalArgumentException("include must be sdk, always or non_null, not " + include);
    }
  }

  private static Map<String, Object> write(Class<?> c, JsonNode values, String include) throws IOException {
    // The record is built through its canonical constructor, as a partner's `new X(...)` would:
    // components not named in `values` get null, 0 or false. A name that is not a component
    // fails here (FAIL_ON_UNKNOWN_PROPERTIES), so a typo in the suite cannot pass unnoticed.
    Object record = DEFAULT_MAPPER.treeToValue(values.isMissingNode() ? PROTOCOL.createObjectNode() : values, c);
    byte[] bytes = mapperFor(c, include).writeValueAsBytes(record);
    return Map.of("ok", true, "json", new String(bytes, StandardCharsets.UTF_8));
  }

  private static Map<String, Object> read(Class<?> c, String json) {
    try {
      // Either mapper reads alike: inclusion only changes writing.
      DEFAULT_MAPPER.readValue(json.getBytes(StandardCharsets.UTF_8), c);
      return Map.of("ok", true);
    } catch (Exception e) {
      return failure(describe(e));
    }
  }

  private static List<Map<String, Object>> describeRecords() {
    List<Map<String, Object>> records = new ArrayList<>();
    for (Map.Entry<String, Class<?>> entry : RECORDS.entrySet()) {
      List<List<String>> components = new ArrayList<>();
      for (RecordComponent component : entry.getValue().getRecordComponents()) {
        components.add(List.of(component.getName(), typeName(component.getGenericType())));
      }
      records.add(Map.of("name", entry.getKey(), "components", components));
    }
    return records;
  }

  /** `String`, `boolean`, `Address`, `List<Entity>`: the spelling the suite's list uses. */
  private static String typeName(Type type) {
    if (type instanceof Class<?> c) return c.getSimpleName();
    if (type instanceof ParameterizedType p) {
      List<String> arguments = new ArrayList<>();
      for (Type argument : p.getActualTypeArguments()) arguments.add(typeName(argument));
      return typeName(p.getRawType()) + "<" + String.join(",", arguments) + ">";
    }
    return type.getTypeName();
  }

  private static String describe(Exception e) {
    if (e instanceof JsonProcessingException j) {
      String path = j instanceof com.fasterxml.jackson.databind.JsonMappingException m ? m.getPathReference() : null;
      return j.getOriginalMessage() + (path == null ? "" : " (at " + path + ")");
    }
    return e.toString();
  }

  private static Map<String, Object> failure(String message) {
    Map<String, Object> result = new LinkedHashMap<>();
    result.put("ok", false);
    result.put("error", message);
    return result;
  }
}
