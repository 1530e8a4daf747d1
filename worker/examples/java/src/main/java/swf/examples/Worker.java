/*
 * Worker.java - an swf activity worker on Kafka's Java client
 * (org.apache.kafka:kafka-clients): upper-cases the "text" field of its input.
 *
 *   SWF_KAFKA_BROKERS=host:port java -jar target/swf-example-worker.jar [--task-list upper]
 *
 * The contract is protocol/KAFKA.md, followed step by step as the Python and
 * JavaScript examples do. The Java client's default partitioner places a keyed
 * message with murmur2, as every swf process does, so an answer keyed by its
 * execution id reaches the decider that owns the execution without any
 * setting. One task at a time: a task's offset is committed only after Kafka
 * acknowledged its answer, so a crash at any point means the task comes again
 * (answering twice is harmless), never that it is lost.
 *
 * A worker answers its own tasks and nothing else: it sends only
 * activity.started, activity.completed, activity.failed and
 * activity.heartbeat, each carrying
 * the task's token unchanged. The control messages (decide, signal, cancel,
 * timer.fired, ...) are signed with the deployment's secret, which a worker
 * neither has nor needs; the decider dead-letters them from anyone else.
 *
 * SWF_KAFKA_SESSION_TIMEOUT_MS sets how long the group waits for a worker that
 * went silent (killed, paused) before its tasks go to another (the client's
 * default: 45 s).
 */
package swf.examples;

import com.fasterxml.jackson.core.StreamReadFeature;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.cfg.JsonNodeFeature;
import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.lang.management.ManagementFactory;
import java.net.InetAddress;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Base64;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.kafka.clients.consumer.CloseOptions;
import org.apache.kafka.clients.consumer.CommitFailedException;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.RebalanceInProgressException;
import org.apache.kafka.common.errors.WakeupException;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;

public final class Worker {
    static final int MAX_MESSAGE_BYTES = 1024 * 1024;
    static final int DEAD_LETTER_KEEP_BYTES = 512 * 1024; // of the original (KAFKA.md)

    /*
     * Strict JSON as swf reads it: a duplicate key is refused, integers of
     * any size and decimals are kept as written (BigInteger, BigDecimal),
     * never rounded through a double.
     */
    static final ObjectMapper JSON = JsonMapper.builder()
            .enable(StreamReadFeature.STRICT_DUPLICATE_DETECTION)
            .enable(DeserializationFeature.USE_BIG_DECIMAL_FOR_FLOATS)
            .enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS)
            .configure(JsonNodeFeature.STRIP_TRAILING_BIGDECIMAL_ZEROES, false)
            .build();

    /** The activity failed: error is the name Retry and Catch match. */
    static final class ActivityError extends Exception {
        private static final long serialVersionUID = 1L;
        final String error;

        ActivityError(String error, String cause) {
            super(cause);
            this.error = error;
        }
    }

    static String env(String name, String dflt) {
        String v = System.getenv(name);
        return v == null || v.isEmpty() ? dflt : v;
    }

    /** The activity itself: a result, or an ActivityError. */
    static JsonNode work(JsonNode input) throws ActivityError {
        JsonNode text = input == null ? null : input.get("text");
        if (text == null || !text.isTextual())
            throw new ActivityError("example.NoText", "the input has no string field text");
        return JSON.createObjectNode().put("text", text.asText().toUpperCase(Locale.ROOT));
    }

    /** The fields a worker needs (protocol/schemas/messages/activity.task.schema.json). */
    static JsonNode checkTask(byte[] value) throws Exception {
        if (value == null || value.length > MAX_MESSAGE_BYTES)
            throw new IllegalArgumentException("empty or oversized message");
        // Not UTF-8 is refused here, not decoded with replacement characters.
        String text = StandardCharsets.UTF_8.newDecoder()
                .onMalformedInput(CodingErrorAction.REPORT)
                .onUnmappableCharacter(CodingErrorAction.REPORT)
                .decode(ByteBuffer.wrap(value)).toString();
        JsonNode task = JSON.readTree(text);
        if (task == null || !task.isObject() || !"activity.task".equals(task.path("type").asText(null)))
            throw new IllegalArgumentException("not an activity.task");
        if (task.has("v") && !(task.get("v").isIntegralNumber() && task.get("v").asInt() == 1))
            throw new IllegalArgumentException("unknown protocol version " + task.get("v"));
        for (String field : List.of("taskToken", "executionId", "activityId")) {
            JsonNode f = task.get(field);
            if (f == null || !f.isTextual() || f.asText().isEmpty())
                throw new IllegalArgumentException("missing field " + field);
        }
        if (!task.has("input"))
            throw new IllegalArgumentException("missing field input");
        return task;
    }

    /*
     * The dead-letter entry of a message (KAFKA.md, "Dead letters"): the
     * original cut to 512 KiB, and less when escaping would make the entry
     * over 1 MiB; the original bytes in base64 when they are not UTF-8.
     */
    static byte[] deadLetter(String reason, ConsumerRecord<byte[], byte[]> msg, String group,
            String identity) throws Exception {
        byte[] value = msg.value() == null ? new byte[0] : msg.value();
        int keep = Math.min(value.length, DEAD_LETTER_KEEP_BYTES);
        for (;;) {
            byte[] raw = java.util.Arrays.copyOf(value, keep);
            ObjectNode entry = JSON.createObjectNode();
            entry.put("v", 1).put("type", "dead-letter")
                    .put("reason", reason.length() > 1024 ? reason.substring(0, 1024) : reason)
                    .put("topic", msg.topic()).put("partition", msg.partition())
                    .put("offset", msg.offset()).put("consumer", group).put("identity", identity);
            try {
                entry.put("message", StandardCharsets.UTF_8.newDecoder()
                        .onMalformedInput(CodingErrorAction.REPORT)
                        .decode(ByteBuffer.wrap(raw)).toString());
            } catch (CharacterCodingException e) {
                entry.put("message", new String(raw, StandardCharsets.UTF_8));
                entry.put("messageBase64", Base64.getEncoder().encodeToString(raw));
            }
            if (keep < value.length)
                entry.put("truncated", true);
            byte[] data = JSON.writeValueAsBytes(entry);
            if (data.length <= MAX_MESSAGE_BYTES || keep == 0)
                return data;
            keep /= 2;
        }
    }

    public static void main(String[] args) throws Exception {
        String taskList = "upper";
        for (int i = 0; i < args.length; i++) {
            if (args[i].equals("--task-list") && i + 1 < args.length)
                taskList = args[++i];
            else {
                System.err.println("usage: Worker [--task-list NAME]");
                System.exit(2);
            }
        }
        String brokers = System.getenv("SWF_KAFKA_BROKERS");
        if (brokers == null || brokers.isEmpty()) {
            System.err.println("set SWF_KAFKA_BROKERS");
            System.exit(2);
        }
        String inbox = env("SWF_INBOX_TOPIC", "swf.inbox");
        String dlq = env("SWF_DLQ_TOPIC", "swf.dlq");
        String topic = env("SWF_TASK_TOPIC_PREFIX", "swf.tasks.") + taskList;
        String group = "swf-workers." + taskList;
        String identity = InetAddress.getLocalHost().getHostName() + ":"
                + ManagementFactory.getRuntimeMXBean().getPid() + ":java";

        Properties c = new Properties();
        c.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, brokers);
        c.put(ConsumerConfig.GROUP_ID_CONFIG, group);
        c.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false"); // commit after the answer
        c.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest"); // earlier tasks count too
        c.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, "16"); // take no more than we run soon
        c.put(ConsumerConfig.CLIENT_ID_CONFIG, identity);
        String session = System.getenv("SWF_KAFKA_SESSION_TIMEOUT_MS");
        if (session != null && !session.isEmpty()) {
            c.put(ConsumerConfig.SESSION_TIMEOUT_MS_CONFIG, session);
            int hb = Math.max(100, Integer.parseInt(session) / 3);
            c.put(ConsumerConfig.HEARTBEAT_INTERVAL_MS_CONFIG, Integer.toString(hb));
        }
        Properties p = new Properties();
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, brokers);
        p.put(ProducerConfig.ACKS_CONFIG, "all");
        p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "true");
        p.put(ProducerConfig.MAX_REQUEST_SIZE_CONFIG, "2000000"); // the size is checked here
        p.put(ProducerConfig.LINGER_MS_CONFIG, "0");
        p.put(ProducerConfig.CLIENT_ID_CONFIG, identity);
        // No partitioner setting: the default places a keyed message with
        // murmur2, as swf does (protocol/KAFKA.md, Partitioning).

        KafkaConsumer<byte[], byte[]> consumer =
                new KafkaConsumer<>(c, new ByteArrayDeserializer(), new ByteArrayDeserializer());
        KafkaProducer<byte[], byte[]> producer =
                new KafkaProducer<>(p, new ByteArraySerializer(), new ByteArraySerializer());
        AtomicBoolean stopping = new AtomicBoolean();
        Thread mainThread = Thread.currentThread();
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            // SIGTERM/SIGINT: finish the running task, commit, leave the group.
            stopping.set(true);
            consumer.wakeup();
            try {
                mainThread.join(15000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }));
        consumer.subscribe(List.of(topic));
        System.err.println("Worker.java: " + identity + " taking tasks of " + topic);

        try {
            while (!stopping.get()) {
                for (ConsumerRecord<byte[], byte[]> msg : consumer.poll(Duration.ofMillis(500))) {
                    byte[] value = answer(msg, inbox, dlq, group, identity, producer);
                    if (value != null)
                        System.err.println("Worker.java: " + new String(value, StandardCharsets.UTF_8)
                                .replaceAll("\"taskToken\":\"[^\"]*\",?", ""));
                    // Only after Kafka acknowledged the answer (answer() waited).
                    try {
                        consumer.commitSync(Map.of(new TopicPartition(msg.topic(), msg.partition()),
                                new OffsetAndMetadata(msg.offset() + 1)));
                    } catch (CommitFailedException | RebalanceInProgressException e) {
                        // The group moved the partition away while we worked
                        // (this process was paused or too slow): the tasks not
                        // committed come to the new owner, whose second answers
                        // change nothing. Go on rather than die: the rest of
                        // this batch is answered too (skipping it would leave
                        // the position past tasks nobody answered, if the
                        // partition stays ours).
                        System.err.println("Worker.java: commit refused (" + e.getClass().getSimpleName()
                                + "); going on");
                    }
                }
            }
        } catch (WakeupException e) {
            // the shutdown hook: fall through to close
        } finally {
            consumer.close(CloseOptions.timeout(Duration.ofSeconds(10)));
            producer.close(Duration.ofSeconds(10));
        }
    }

    /*
     * Answers one task (or dead-letters a message that is not one) and waits
     * until Kafka acknowledged it; returns the answer sent, or null for a dead
     * letter. An answer that cannot be produced throws: the worker then exits
     * with the task uncommitted, and it comes again (KAFKA.md, Errors).
     */
    static byte[] answer(ConsumerRecord<byte[], byte[]> msg, String inbox, String dlq,
            String group, String identity, KafkaProducer<byte[], byte[]> producer)
            throws Exception {
        JsonNode task;
        try {
            task = checkTask(msg.value());
        } catch (Exception e) { // not UTF-8, not JSON, a duplicate key, a missing field
            String reason = e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage();
            producer.send(new ProducerRecord<>(dlq, msg.key(), deadLetter(reason, msg, group, identity)))
                    .get(30, TimeUnit.SECONDS);
            return null;
        }
        String token = task.get("taskToken").asText();
        byte[] key = task.get("executionId").asText().getBytes(StandardCharsets.UTF_8);
        // Taken: the history records ActivityTaskStarted now, and the heartbeat
        // timeout counts from here (KAFKA.md, "5. Heartbeats").
        ObjectNode started = JSON.createObjectNode().put("v", 1).put("type", "activity.started")
                .put("taskToken", token).put("identity", identity);
        producer.send(new ProducerRecord<>(inbox, key, JSON.writeValueAsBytes(started)))
                .get(30, TimeUnit.SECONDS);
        if (task.path("heartbeatTimeout").asDouble(0) > 0) {
            // A long activity sends one at least every heartbeatTimeout seconds.
            ObjectNode hb = JSON.createObjectNode().put("v", 1).put("type", "activity.heartbeat")
                    .put("taskToken", token);
            hb.putObject("details").put("progress", 0);
            producer.send(new ProducerRecord<>(inbox, key, JSON.writeValueAsBytes(hb)))
                    .get(30, TimeUnit.SECONDS);
        }
        ObjectNode answer = JSON.createObjectNode().put("v", 1);
        byte[] value;
        try {
            JsonNode result = work(task.get("input"));
            answer.put("type", "activity.completed").put("taskToken", token);
            answer.set("result", result);
            answer.put("identity", identity);
            value = JSON.writeValueAsBytes(answer);
            if (value.length > MAX_MESSAGE_BYTES)
                throw new ActivityError("swf.OutputTooLarge", "the answer would be " + value.length
                        + " bytes, more than the " + MAX_MESSAGE_BYTES + " of a message");
        } catch (Exception e) { // an ActivityError, or a bug in work(): report it, do not die
            String error = e instanceof ActivityError ? ((ActivityError) e).error : "example.Crashed";
            String cause = String.valueOf(e.getMessage());
            answer = JSON.createObjectNode().put("v", 1).put("type", "activity.failed")
                    .put("taskToken", token).put("error", error)
                    .put("cause", cause.length() > 1024 ? cause.substring(0, 1024) : cause)
                    .put("identity", identity);
            value = JSON.writeValueAsBytes(answer);
        }
        producer.send(new ProducerRecord<>(inbox, key, value)).get(30, TimeUnit.SECONDS);
        return value;
    }
}
