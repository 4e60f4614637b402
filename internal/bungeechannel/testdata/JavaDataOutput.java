// Writes BungeeCord channel messages with java.io.DataOutputStream, the class
// BungeeCord and Spigot plugins use (through Guava's ByteArrayDataOutput), as
// the second source the Go encoder and decoder are checked against.
// Regenerate java.txt with:  java JavaDataOutput.java > java.txt   (JDK 11+)
// Each line: case name, a space, the bytes in hex.
import java.io.ByteArrayOutputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.util.UUID;

public class JavaDataOutput {
    interface Body { void write(DataOutputStream out) throws IOException; }

    static void emit(String name, Body body) throws IOException {
        ByteArrayOutputStream buf = new ByteArrayOutputStream();
        DataOutputStream out = new DataOutputStream(buf);
        body.write(out);
        out.flush();
        StringBuilder hex = new StringBuilder();
        for (byte b : buf.toByteArray()) hex.append(String.format("%02x", b & 0xff));
        System.out.println(name + " " + hex);
    }

    static String undashed(String uuid) { return UUID.fromString(uuid).toString().replace("-", ""); }

    public static void main(String[] args) throws IOException {
        // Replies, written as BungeeCord's DownstreamBridge writes them.
        emit("reply-ip", o -> { o.writeUTF("IP"); o.writeUTF("203.0.113.7"); o.writeInt(54321); });
        emit("reply-ipother", o -> { o.writeUTF("IPOther"); o.writeUTF("Notch"); o.writeUTF("2001:db8::1"); o.writeInt(25565); });
        emit("reply-playercount-all", o -> { o.writeUTF("PlayerCount"); o.writeUTF("ALL"); o.writeInt(3); });
        emit("reply-playercount-server", o -> { o.writeUTF("PlayerCount"); o.writeUTF("lobby"); o.writeInt(70000); });
        emit("reply-playerlist", o -> { o.writeUTF("PlayerList"); o.writeUTF("lobby"); o.writeUTF(String.join(", ", "Notch", "jeb_", "Dinnerbone")); });
        emit("reply-playerlist-empty", o -> { o.writeUTF("PlayerList"); o.writeUTF("survival"); o.writeUTF(""); });
        emit("reply-getservers", o -> { o.writeUTF("GetServers"); o.writeUTF(String.join(", ", "lobby", "survival", "créatif")); });
        emit("reply-getserver", o -> { o.writeUTF("GetServer"); o.writeUTF("lobby"); });
        emit("reply-getplayerserver", o -> { o.writeUTF("GetPlayerServer"); o.writeUTF("jeb_"); o.writeUTF("survival"); });
        emit("reply-getplayerserver-offline", o -> { o.writeUTF("GetPlayerServer"); o.writeUTF("Herobrine"); o.writeUTF(""); });
        emit("reply-uuid", o -> { o.writeUTF("UUID"); o.writeUTF(undashed("069a79f4-44e9-4726-a5be-fca90e38aaf5")); });
        emit("reply-uuidother", o -> { o.writeUTF("UUIDOther"); o.writeUTF("jeb_"); o.writeUTF(undashed("853c80ef-3c37-49fd-aa49-938b674adae6")); });
        emit("reply-serverip", o -> { o.writeUTF("ServerIP"); o.writeUTF("survival"); o.writeUTF("10.0.0.11"); o.writeShort(40000); });
        // What Forward and ForwardToPlayer deliver to the target backend.
        emit("forwarded", o -> { o.writeUTF("MyChannel"); byte[] d = {0, 1, (byte) 0xff, 0x7f, (byte) 0x80}; o.writeShort(d.length); o.write(d); });
        // Requests, written as plugins write them.
        emit("req-connect", o -> { o.writeUTF("Connect"); o.writeUTF("survival"); });
        emit("req-connectother", o -> { o.writeUTF("ConnectOther"); o.writeUTF("jeb_"); o.writeUTF("lobby"); });
        emit("req-ip", o -> { o.writeUTF("IP"); });
        emit("req-playerlist", o -> { o.writeUTF("PlayerList"); o.writeUTF("ALL"); });
        emit("req-message", o -> { o.writeUTF("Message"); o.writeUTF("ALL"); o.writeUTF("§aHello\u0000 wörld €😀"); });
        emit("req-kickplayerraw", o -> { o.writeUTF("KickPlayerRaw"); o.writeUTF("Notch"); o.writeUTF("{\"text\":\"Bye 👋\",\"color\":\"red\"}"); });
        emit("req-forward", o -> { o.writeUTF("Forward"); o.writeUTF("ONLINE"); o.writeUTF("MyChannel"); byte[] d = {0, 1, (byte) 0xff, 0x7f, (byte) 0x80}; o.writeShort(d.length); o.write(d); });
        emit("req-forwardtoplayer", o -> { o.writeUTF("ForwardToPlayer"); o.writeUTF("Notch"); o.writeUTF("MyChannel"); o.writeShort(0); });
    }
}
