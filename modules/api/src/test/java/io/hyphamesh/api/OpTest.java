package io.hyphamesh.api;

import java.util.HashSet;
import java.util.Set;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class OpTest {

    @Test
    void everyOperationIsFoundByItsKindAndWireName() {
        Set<String> labels = new HashSet<>();
        for (Op op : Op.values()) {
            assertTrue(labels.add(op.label()), "one operation per kind and name: " + op.label());
            Op back = op.kind().isPresent() ? Op.of(op.kind().get(), op.wire()) : Op.ofSocket(op.wire());
            assertEquals(op, back);
        }
    }

    @Test
    void unknownOperationsAreBadRequestsNamingTheKind() {
        HyphaException e = assertThrows(HyphaException.class, () -> Op.of(ObjectKind.LOG, "apend"));
        assertEquals(ErrorCode.BAD_REQUEST, e.code());
        assertEquals("unknown Log operation 'apend'", e.getMessage());
        assertEquals(ErrorCode.BAD_REQUEST, assertThrows(HyphaException.class, () -> Op.ofSocket("append")).code());
        // a name of another kind is not borrowed
        assertThrows(HyphaException.class, () -> Op.of(ObjectKind.WORKSPACE, "delete"));
    }

    @Test
    void fieldsOutsideTheOperationsOwnAreRefused() {
        Op.APPEND.checkFields(Frame.parse("{\"id\":1,\"to\":\"log:a\",\"op\":\"append\",\"body\":1,\"producer\":\"p\",\"pseq\":1}"));
        HyphaException e = assertThrows(HyphaException.class,
                () -> Op.APPEND.checkFields(Frame.parse("{\"id\":1,\"op\":\"append\",\"body\":1,\"pseqq\":1}")));
        assertEquals("unknown field 'pseqq' for 'append'", e.getMessage());
    }

    @Test
    void permissionAndResendRulesComeFromTheVocabulary() {
        Op.READ.checkPermission(Permission.READ);
        assertEquals(ErrorCode.FORBIDDEN, assertThrows(HyphaException.class,
                () -> Op.LOG_DELETE.checkPermission(Permission.READ_WRITE)).code());
        assertTrue(Op.APPEND.safeToResend(true));
        assertFalse(Op.APPEND.safeToResend(false));
        assertFalse(Op.CALL.safeToResend(true));
        assertTrue(Op.REGISTER.safeToResend(false));
        assertEquals("log.append", Op.APPEND.label());
        assertEquals(Op.LOG_CREDIT, Op.SOCKET_CREDIT.on(ObjectKind.LOG));
    }

    @Test
    void exactlyCreditAndUnsubscribeNameASubscription() {
        java.util.Set<Op> expected = java.util.EnumSet.of(Op.SOCKET_CREDIT, Op.SOCKET_UNSUBSCRIBE, Op.LOG_CREDIT,
                Op.LOG_UNSUBSCRIBE, Op.DOC_CREDIT, Op.DOC_UNSUBSCRIBE, Op.WS_CREDIT, Op.WS_UNSUBSCRIBE);
        for (Op op : Op.values()) {
            org.junit.jupiter.api.Assertions.assertEquals(expected.contains(op), op.namesSubscription(), op.name());
        }
    }
}
